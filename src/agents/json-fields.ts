// Helpers shared by the agent adapters and their JSON-lines output parsers.
import { isAuthFailure, isConfigFailure } from "./limit-detect.js";
import type { AgentErrorKind, AgentEvent, AgentOutcome, LimitInfo } from "./types.js";
import { clip } from "../util/clip.js";

/** One JSON object read from an agent's output. */
export type Json = Record<string, unknown>;

/** A failure a parser found in an iteration's output, with the limit when it is one. */
export interface AgentFailure {
  kind: AgentErrorKind;
  message: string;
  limit?: LimitInfo;
}

/** The value when it is a plain object (not an array), else null. */
export function asRecord(value: unknown): Json | null {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Json) : null;
}

/** The value when it is a finite number, else undefined. */
export function asNumber(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) ? value : undefined;
}

/** The value when it is a string, else "". */
export function asText(value: unknown): string {
  return typeof value === "string" ? value : "";
}

/** The text parsed as a JSON object, or null when it is not one. */
export function parseJsonRecord(text: string): Json | null {
  try {
    return asRecord(JSON.parse(text));
  } catch {
    return null;
  }
}

/** The last 20 non-JSON lines of an agent's stdout, each clipped to `limit`: they help explain a failure. */
export class StrayLines {
  readonly lines: string[] = [];

  constructor(private readonly limit: number) {}

  /**
   * Reads one stdout line: a JSON object goes to `onJson`, anything else is kept (after the events of
   * `beforeStray`, e.g. text still buffered) as a stray line; blank lines give nothing.
   */
  read(text: string, onJson: (json: Json) => AgentEvent[], beforeStray: () => AgentEvent[] = () => []): AgentEvent[] {
    const trimmed = text.trim();
    if (trimmed === "") return [];
    const parsed = parseJsonRecord(trimmed);
    return parsed ? onJson(parsed) : [...beforeStray(), this.keep(trimmed)];
  }

  /** Keeps one non-JSON line and returns the "other" event it becomes. */
  keep(text: string): AgentEvent {
    const clipped = clip(text, this.limit);
    this.lines.push(clipped);
    if (this.lines.length > 20) this.lines.shift();
    return { kind: "other", text: clipped };
  }
}

/** An "other" failure named by the first meaningful line of `text`, when the agent exited non-zero by itself. */
export function firstLineFailure(
  text: string,
  exit: { code: number | null; signal: string | null },
  limit: number,
  ignore: RegExp | null = null,
): AgentFailure | null {
  const lines = text.split("\n").filter((line) => line.trim() !== "" && !(ignore?.test(line) ?? false));
  if (lines.length === 0 || exit.code === 0 || exit.signal !== null) return null;
  // A bad flag or an unknown model is named anywhere in the output, and no retry can fix it.
  const config = lines.find(isConfigFailure);
  if (config) return { kind: "config", message: clip(config.trim(), limit) };
  return { kind: isAuthFailure(lines[0] ?? "") ? "auth" : "other", message: clip((lines[0] ?? "").trim(), limit) };
}

/** Copies a failure, when there is one, into the outcome's `error` and `limit`. */
export function applyFailure(outcome: AgentOutcome, failure: AgentFailure | null): void {
  if (!failure) return;
  outcome.error = { kind: failure.kind, message: failure.message };
  if (failure.limit) outcome.limit = failure.limit;
}

/** The agent binary named by the environment variable, or the default name when it is unset or empty. */
export function binaryFrom(env: NodeJS.ProcessEnv, variable: string, fallback: string): string {
  return env[variable] || fallback;
}
