// `--max-tokens`: a token cap over every kind (`2M`), or caps by kind (`output=200k,input=1M`); the kinds are
// input, output, cache_read, cache_write and total.
import type { Parsed } from "./parse-value.js";

/** Token caps by kind (`total`: every kind together). */
export type TokenCapsSetting = Partial<Record<"total" | "input" | "output" | "cache_read" | "cache_write", number>>;

const KINDS = ["total", "input", "output", "cache_read", "cache_write"] as const;
const EXPECTED =
  "a token count such as 2M or 500k, or counts by kind such as output=200k,input=1M (kinds: input, output, cache_read, cache_write, total)";
const UNITS: Record<string, number> = { "": 1, k: 1_000, m: 1_000_000, g: 1_000_000_000 };

function count(text: string): number | null {
  const match = /^([0-9]+(?:\.[0-9]+)?)([kmg]?)$/i.exec(text.trim());
  if (!match?.[1]) return null;
  const value = Math.floor(Number(match[1]) * (UNITS[(match[2] ?? "").toLowerCase()] ?? 1));
  return Number.isSafeInteger(value) && value > 0 ? value : null;
}

/** `--max-tokens` as caps by kind. */
export function parseTokenCaps(raw: unknown): Parsed<TokenCapsSetting> {
  const text = typeof raw === "number" ? String(raw) : raw;
  if (typeof text !== "string" || text.trim() === "") return { ok: false, expected: EXPECTED };
  const caps: TokenCapsSetting = {};
  for (const part of text.split(",")) {
    const [kind, value] = part.includes("=") ? (part.split("=", 2) as [string, string]) : ["total", part];
    const name = kind.trim().replace(/-/g, "_") as (typeof KINDS)[number];
    const n = count(value);
    if (!KINDS.includes(name) || n === null || caps[name] !== undefined) return { ok: false, expected: EXPECTED };
    caps[name] = n;
  }
  return { ok: true, value: caps };
}
