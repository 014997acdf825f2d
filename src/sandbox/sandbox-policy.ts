// The sandbox settings (SPEC section 15): `--sandbox` / `sandbox:` in ralph.yaml, as a mode word or a mapping.
import type { Parsed } from "../util/parse-value.js";

/** Whether the agent runs sandboxed: always, never, or where the machine allows it. */
export type SandboxMode = "on" | "off" | "auto";

/** Where the sandboxed agent may connect: the agent's own API host, nowhere, or a list of host[:port] patterns. */
export type SandboxNetwork = { kind: "default" } | { kind: "none" } | { kind: "allow"; hosts: string[] };

/** The whole `sandbox` setting. */
export interface SandboxSettings {
  mode: SandboxMode;
  network: SandboxNetwork;
  /** More paths the agent cannot read (besides the default secret paths). */
  readDeny: string[];
  /** More paths the agent may write (besides the work directory and its private /tmp). */
  writeAllow: string[];
  /** Names (a trailing `*` matches a prefix) of more variables that pass into the sandbox, besides its fixed allowlist; null: none. */
  env: string[] | null;
}

/** The setting when nothing asks for a sandbox. */
export const NO_SANDBOX: SandboxSettings = {
  mode: "off",
  network: { kind: "default" },
  readDeny: [],
  writeAllow: [],
  env: null,
};

/** `ralph run`'s default: sandboxed where bubblewrap works, else one line saying why and the run goes on without. */
export const DEFAULT_SANDBOX: SandboxSettings = { ...NO_SANDBOX, mode: "auto" };

const MODES: readonly SandboxMode[] = ["on", "off", "auto"];
const KEYS = ["mode", "network", "allow", "read_deny", "write_allow", "env"];
const HOST_PATTERN = /^(\*\.)?[A-Za-z0-9.-]+(:(\d{1,5}|\*))?$|^\[[0-9A-Fa-f:.]+\](:(\d{1,5}|\*))?$/;

function bad<T>(expected: string): Parsed<T> {
  return { ok: false, expected };
}

function modeOf(raw: unknown): SandboxMode | null {
  if (raw === true) return "on";
  if (raw === false) return "off";
  if (typeof raw !== "string") return null;
  const word = raw.trim().toLowerCase();
  if (word === "" || word === "true" || word === "yes") return "on";
  if (word === "false" || word === "no") return "off";
  return (MODES as readonly string[]).includes(word) ? (word as SandboxMode) : null;
}

function textList(raw: unknown): string[] | null {
  if (raw === undefined || raw === null) return [];
  if (typeof raw === "string")
    return raw
      .split(",")
      .map((item) => item.trim())
      .filter((item) => item !== "");
  if (!Array.isArray(raw) || !raw.every((item) => typeof item === "string" && item.length > 0)) return null;
  return raw as string[];
}

function networkOf(raw: unknown, allow: unknown): SandboxNetwork | string {
  const listed =
    typeof raw === "object" && raw !== null && !Array.isArray(raw)
      ? (raw as Record<string, unknown>).allow
      : raw === "allow"
        ? allow
        : undefined;
  if (raw === undefined || raw === "default")
    return allow === undefined ? { kind: "default" } : networkOf("allow", allow);
  if (raw === "none") return { kind: "none" };
  const hosts = listed === undefined ? null : textList(listed);
  if (hosts === null) return "network: none, default, or allow: a list of host[:port] patterns";
  const wrong = hosts.find((host) => !HOST_PATTERN.test(host));
  if (wrong !== undefined)
    return `network.allow: host[:port] patterns such as api.example.com, *.example.com:443 or 127.0.0.1:8080 (not ${JSON.stringify(wrong)})`;
  return { kind: "allow", hosts };
}

/** Reads `--sandbox [MODE]`, RALPH_SANDBOX, or ralph.yaml's `sandbox:` (a mode word, or a mapping with `mode:` default on). */
export function parseSandbox(raw: unknown): Parsed<SandboxSettings> {
  const mode = modeOf(raw);
  if (mode !== null) return { ok: true, value: { ...NO_SANDBOX, mode } };
  if (typeof raw !== "object" || raw === null || Array.isArray(raw))
    return bad("on, off, auto, or a mapping of mode, network, read_deny, write_allow, env");
  const map = raw as Record<string, unknown>;
  const unknownKey = Object.keys(map).find((key) => !KEYS.includes(key));
  if (unknownKey !== undefined) return bad(`sandbox keys ${KEYS.join(", ")} (not ${unknownKey})`);
  const chosen = map.mode === undefined ? "on" : modeOf(map.mode);
  if (chosen === null) return bad("mode: on, off or auto");
  const network = networkOf(map.network, map.allow);
  if (typeof network === "string") return bad(network);
  const readDeny = textList(map.read_deny);
  const writeAllow = textList(map.write_allow);
  const env = map.env === undefined || map.env === null ? undefined : textList(map.env);
  if (readDeny === null) return bad("read_deny: a list of paths");
  if (writeAllow === null) return bad("write_allow: a list of paths");
  if (env === null) return bad("env: a list of variable names");
  return { ok: true, value: { mode: chosen, network, readDeny, writeAllow, env: env ?? null } };
}

/** Whether a variable name matches one of `allowed` (null matches everything). */
export function envPasses(name: string, allowed: string[] | null): boolean {
  if (allowed === null) return true;
  return allowed.some((pattern) => (pattern.endsWith("*") ? name.startsWith(pattern.slice(0, -1)) : pattern === name));
}
