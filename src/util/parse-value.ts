// Strict parsers for option values; each returns the value or a message saying what was expected.
import { splitShellWords } from "./shell-words.js";

/** A parsed value, or what was expected instead. */
export type Parsed<T> = { ok: true; value: T } | { ok: false; expected: string; hint?: string };

const ok = <T>(value: T): Parsed<T> => ({ ok: true, value });
const bad = <T>(expected: string): Parsed<T> => ({ ok: false, expected });

/** A whole number written in base 10 (leading zeros allowed: `08` is 8). */
export function parseCount(raw: unknown): Parsed<number> {
  if (typeof raw === "number" && Number.isSafeInteger(raw) && raw >= 0) return ok(raw);
  if (typeof raw !== "string" || !/^[0-9]+$/.test(raw.trim())) return bad("a whole number (0 or more, base 10)");
  const value = Number.parseInt(raw.trim(), 10);
  return Number.isSafeInteger(value) ? ok(value) : bad("a whole number (0 or more, base 10)");
}

/** A task's 0-based position (`--task-index`): a whole number, or `job` for the Indexed Job's JOB_COMPLETION_INDEX. */
export function parseTaskIndex(raw: unknown): Parsed<number | "job"> {
  if (typeof raw === "string" && raw.trim() === "job") return ok("job");
  const count = parseCount(raw);
  return count.ok
    ? count
    : bad("a task's 0-based position in the list (0 or more, base 10), or job (from JOB_COMPLETION_INDEX)");
}

const DURATION_UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
const MAX_TIMER_MS = 2 ** 31 - 1;

/** A duration such as `90`, `90s`, `15m`, `2h` (a bare number is seconds), in milliseconds. */
export function parseDuration(raw: unknown): Parsed<number> {
  const text = typeof raw === "number" ? String(raw) : raw;
  const expected = "a duration such as 90, 90s, 15m or 2h";
  if (typeof text !== "string") return bad(expected);
  const match = /^([0-9]+(?:\.[0-9]+)?)(ms|s|m|h)?$/.exec(text.trim());
  if (!match?.[1]) return bad(expected);
  const ms = Math.round(Number(match[1]) * (DURATION_UNITS[match[2] ?? "s"] ?? 1000));
  // Node's timers cannot wait longer than 2^31-1 ms (a longer delay fires at once).
  return Number.isFinite(ms) && ms <= MAX_TIMER_MS ? ok(ms) : bad(`${expected}, at most 24 days`);
}

/** A duration as a person would write it: `90s`, `15m`, `250ms`. */
export function formatDuration(ms: number): string {
  if (ms % 60_000 === 0) return `${ms / 60_000}m`;
  if (ms % 1000 === 0) return `${ms / 1000}s`;
  return `${ms}ms`;
}

/** A duration that must be longer than zero (a limit of 0 would end everything at once). */
export function parsePositiveDuration(raw: unknown): Parsed<number> {
  const parsed = parseDuration(raw);
  if (parsed.ok && parsed.value === 0) return bad("a duration longer than 0, such as 90s, 15m or 2h");
  return parsed;
}

/** An amount of US dollars such as `5` or `2.50`. */
export function parseUsd(raw: unknown): Parsed<number> {
  const text = typeof raw === "number" ? String(raw) : raw;
  if (typeof text !== "string" || !/^[0-9]+(\.[0-9]+)?$/.test(text.trim()))
    return bad("an amount in US dollars such as 5 or 2.50");
  return ok(Number(text.trim()));
}

/** `true`/`false` (and 1/0, yes/no) from flags, environment or YAML. */
export function parseBoolean(raw: unknown): Parsed<boolean> {
  if (typeof raw === "boolean") return ok(raw);
  if (typeof raw === "string") {
    const text = raw.trim().toLowerCase();
    if (["1", "true", "yes", "on"].includes(text)) return ok(true);
    if (["0", "false", "no", "off", ""].includes(text)) return ok(false);
  }
  return bad("true or false");
}

/** A non-empty string. */
export function parseText(raw: unknown): Parsed<string> {
  return typeof raw === "string" && raw.length > 0 ? ok(raw) : bad("a non-empty text");
}

/** One of a fixed set of words; a near miss (`cluade`) carries the word it was probably meant to be. */
export function parseChoice<T extends string>(choices: readonly T[]): (raw: unknown) => Parsed<T> {
  return (raw) => {
    if (typeof raw === "string" && (choices as readonly string[]).includes(raw)) return ok(raw as T);
    const near = typeof raw === "string" ? closestWord(raw, choices) : null;
    return near === null
      ? bad(`one of ${choices.join(", ")}`)
      : { ok: false, expected: `one of ${choices.join(", ")}`, hint: `did you mean ${near}?` };
  };
}

/** The word of `choices` within two edits of `word` (a swap counts as one), or null. */
export function closestWord(word: string, choices: readonly string[]): string | null {
  let best: { choice: string; distance: number } | null = null;
  for (const choice of choices) {
    const distance = editDistance(word.toLowerCase(), choice.toLowerCase());
    if (distance <= Math.min(2, Math.floor(choice.length / 3)) && (best === null || distance < best.distance))
      best = { choice, distance };
  }
  return best?.choice ?? null;
}

/** Optimal string alignment distance: insertions, deletions, substitutions and adjacent swaps. */
function editDistance(a: string, b: string): number {
  const rows: number[][] = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  const at = (i: number, j: number): number => rows[i]?.[j] ?? Number.MAX_SAFE_INTEGER;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let value = Math.min(at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        value = Math.min(value, at(i - 2, j - 2) + 1);
      (rows[i] as number[])[j] = value;
    }
  }
  return at(a.length, b.length);
}

/** A list of words from a fixed set: a YAML list, or a text of words separated by commas. */
export function parseChoiceList<T extends string>(choices: readonly T[]): (raw: unknown) => Parsed<T[]> {
  const one = parseChoice(choices);
  return (raw) => {
    const items =
      typeof raw === "string"
        ? raw.split(",").map((word) => word.trim())
        : Array.isArray(raw)
          ? (raw as unknown[])
          : null;
    const expected = `a list of ${choices.join(", ")}`;
    if (items === null || items.length === 0) return bad(expected);
    const values: T[] = [];
    for (const item of items) {
      const parsed = one(item);
      if (!parsed.ok) return bad(expected);
      values.push(parsed.value);
    }
    return ok(values);
  };
}

/** A list of strings: a YAML list, or a single string taken as a one-item list. */
export function parseTextList(raw: unknown): Parsed<string[]> {
  if (typeof raw === "string" && raw.length > 0) return ok([raw]);
  if (Array.isArray(raw) && raw.every((item) => typeof item === "string" && item.length > 0))
    return ok(raw as string[]);
  return bad("a text or a list of texts");
}

/** A run id: letters, digits, `.`, `_` and `-`, starting with a letter, digit or `_` (a leading `-` reads as a flag). */
export function parseRunId(raw: unknown): Parsed<string> {
  return typeof raw === "string" && /^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$/.test(raw)
    ? ok(raw)
    : bad("a run id of letters, digits, '.', '_' or '-' (up to 128, starting with a letter, digit or '_')");
}

/**
 * Extra arguments for an agent CLI: a YAML list taken as it is, or a text split into words with shell
 * quoting and nothing expanded (no globs, no variables): `--allowedTools 'Bash(npm *)'` is two words.
 */
export function parseArgumentList(raw: unknown): Parsed<string[]> {
  if (Array.isArray(raw))
    return raw.every((word) => typeof word === "string") ? ok(raw as string[]) : bad("a list of arguments");
  if (typeof raw !== "string") return bad("arguments as a text or a list");
  const split = splitShellWords(raw);
  return split.ok ? ok(split.words) : bad(`arguments with balanced quotes (${split.message})`);
}

/** A command line split into words the way a user would expect, without a shell: quotes group, nothing expands. */
export function parseCommandWords(raw: unknown): Parsed<string[]> {
  if (Array.isArray(raw))
    return raw.length > 0 && raw.every((w) => typeof w === "string") ? ok(raw as string[]) : bad("a command");
  if (typeof raw !== "string") return bad("a command");
  const words: string[] = [];
  let current: string | null = null;
  let quote: '"' | "'" | null = null;
  for (let i = 0; i < raw.length; i++) {
    const ch = raw[i] as string;
    if (quote) {
      if (ch === quote) quote = null;
      else if (ch === "\\" && quote === '"' && i + 1 < raw.length) current += raw[++i] as string;
      else current += ch;
    } else if (ch === '"' || ch === "'") {
      quote = ch;
      current ??= "";
    } else if (/\s/.test(ch)) {
      if (current !== null) words.push(current);
      current = null;
    } else if (ch === "\\" && i + 1 < raw.length) {
      current = (current ?? "") + (raw[++i] as string);
    } else {
      current = (current ?? "") + ch;
    }
  }
  if (quote) return bad("a command with balanced quotes");
  if (current !== null) words.push(current);
  return words.length > 0 ? ok(words) : bad("a command");
}

const SIZE_UNITS: Record<string, number> = { "": 1, k: 2 ** 10, m: 2 ** 20, g: 2 ** 30, t: 2 ** 40 };

/** A size in bytes such as `512M`, `2G`, `1.5g` or `1048576` (K, M, G, T are powers of 1024), at least 1 MiB. */
export function parseSize(raw: unknown): Parsed<number> {
  const text = typeof raw === "number" ? String(raw) : raw;
  const expected = "a size such as 512M, 2G or 1048576 (bytes), at least 1M";
  if (typeof text !== "string") return bad(expected);
  const match = /^([0-9]+(?:\.[0-9]+)?)\s*([kmgt]?)(?:i?b)?$/i.exec(text.trim());
  if (!match?.[1]) return bad(expected);
  const bytes = Math.floor(Number(match[1]) * (SIZE_UNITS[(match[2] ?? "").toLowerCase()] ?? 1));
  return Number.isSafeInteger(bytes) && bytes >= 2 ** 20 ? ok(bytes) : bad(expected);
}

/** A whole number of at least 1. */
export function parsePositiveCount(raw: unknown): Parsed<number> {
  const parsed = parseCount(raw);
  return parsed.ok && parsed.value === 0 ? bad("a whole number of at least 1") : parsed;
}
