// Pure formatting of what a run shows: iteration lines, agent output, decisions, the live status line.
import pc from "picocolors";
import type { RunEvent } from "../store/event-log.js";

/** A token count as a person reads it: 950, 12.3k, 1.20M. */
export function tokenText(count: number): string {
  if (count < 1000) return String(count);
  if (count < 1_000_000) return `${(count / 1000).toFixed(1)}k`;
  return `${(count / 1_000_000).toFixed(2)}M`;
}

/** Elapsed time as 42s, 3m05s, 1h02m. */
export function elapsedText(ms: number): string {
  const seconds = Math.max(0, Math.floor(ms / 1000));
  if (seconds < 60) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes}m${String(seconds % 60).padStart(2, "0")}s`;
  return `${Math.floor(minutes / 60)}h${String(minutes % 60).padStart(2, "0")}m`;
}

/** Input plus output tokens of a `tokens` field, or null when there is none. */
export function tokensOf(value: unknown): number | null {
  if (!value || typeof value !== "object") return null;
  const { input, output } = value as { input?: unknown; output?: unknown };
  const total = (typeof input === "number" ? input : 0) + (typeof output === "number" ? output : 0);
  return typeof input === "number" || typeof output === "number" ? total : null;
}

/** "3/10", or "3/∞" when there is no cap. */
export function ofText(iteration: unknown, maxIterations: number): string {
  return `${String(iteration)}/${maxIterations === 0 ? "∞" : String(maxIterations)}`;
}

/** The header printed when an iteration starts. */
export function iterationHeader(event: RunEvent, maxIterations: number): string {
  const task = typeof event.task === "string" && event.task ? ` · task: ${event.task}` : "";
  return pc.bold(`── iteration ${ofText(event.iteration, maxIterations)}${task} ──`);
}

/** The line summing up a finished iteration; `spend` is the run's total, or null when the agent reports no cost. */
export function iterationLine(event: RunEvent, maxIterations: number, spend: number | null): string {
  const seconds = typeof event.duration_ms === "number" ? `${(event.duration_ms / 1000).toFixed(1)}s` : "";
  const result = String(event.result);
  const failed = result === "failed" || result === "timeout";
  const shown = failed ? pc.red(`${result}${event.error ? ` (${String(event.error)})` : ""}`) : result === "done" ? pc.green(result) : result;
  const tokens = tokensOf(event.tokens);
  const parts = [`[${ofText(event.iteration, maxIterations)}] ${seconds} ${shown}`];
  if (tokens !== null) parts.push(`${tokenText(tokens)} tokens`);
  if (spend !== null) parts.push(`$${spend.toFixed(4)} so far`);
  return parts.join(" · ");
}

const PROMISE_REASONS: Record<string, string> = {
  echoed_prompt: "it is the prompt echoed back, not a claim",
  quoted: "it is inside quotes",
  code: "it is inside Markdown code",
  negated: "the message says it is not done (negated or conditional)",
  bare_phrase: "the promise text appears without the <promise> tag",
  iteration_failed: "the iteration failed",
};

/** Why a promise in the final message did not end the run, or null when there is nothing to explain. */
export function promiseIgnoredLine(event: RunEvent): string | null {
  const ignored = typeof event.promise_ignored === "string" ? event.promise_ignored : null;
  if (ignored === null) return null;
  const why = ignored === "criteria_failing" ? "a completion check failed (its output goes into the next prompt)" : (PROMISE_REASONS[ignored] ?? ignored);
  return pc.yellow(`  promise ignored: ${why}`);
}

const SKIPPED: Record<string, string> = {
  iteration_failed: "the iteration failed",
  dry_run: "a dry run starts nothing",
  promise_not_claimed: "they run once the promise is claimed",
};

/** Why the completion checks did not run, or null when they ran (or there are none). */
export function checksSkippedLine(event: RunEvent): string | null {
  const skipped = typeof event.checks_skipped === "string" ? event.checks_skipped : null;
  return skipped === null ? null : pc.dim(`  checks not run: ${SKIPPED[skipped] ?? skipped}`);
}

/** One completion check's verdict. */
export function criterionLine(event: RunEvent): string {
  const what = `${String(event.criterion)}: ${String(event.check)}`;
  if (event.passed === true) return pc.green(`  check passed: ${what}`);
  const detail = typeof event.detail === "string" && event.detail ? ` (${event.detail.split("\n")[0]?.slice(0, 200) ?? ""})` : "";
  return pc.red(`  check FAILED: ${what}${detail}`);
}

/** An agent event as --live shows it, or null for events that show nothing. */
export function liveLine(event: RunEvent): string | null {
  const text = typeof event.text === "string" ? event.text : "";
  switch (event.kind) {
    case "text":
      return text ? `  ${text.replace(/\n/g, "\n  ")}` : null;
    case "tool_use":
      return pc.cyan(`  → ${String(event.tool ?? "tool")}${text ? ` ${text}` : ""}`);
    case "tool_result":
      return text ? pc.dim(`    ${text.split("\n")[0]?.slice(0, 200)}`) : null;
    case "error":
    case "retry":
      return pc.red(`  ! ${text}`);
    default:
      return null;
  }
}

/** What the live status line shows. */
export interface StatusLineState {
  iteration: unknown;
  maxIterations: number;
  elapsedMs: number;
  tokens: number | null;
  spend: number | null;
  tool: string | null;
  retries: number;
  apiErrors: number;
}

/** The one-line status of a running iteration, cut to `width` columns. */
export function statusLine(state: StatusLineState, width: number): string {
  const parts = [`[${ofText(state.iteration, state.maxIterations)}] ${elapsedText(state.elapsedMs)}`];
  if (state.tokens !== null) parts.push(`${tokenText(state.tokens)} tokens`);
  if (state.spend !== null) parts.push(`$${state.spend.toFixed(4)}`);
  parts.push(state.tool ? `tool: ${state.tool}` : "thinking");
  if (state.retries > 0) parts.push(`${state.retries} ${state.retries === 1 ? "retry" : "retries"}`);
  if (state.apiErrors > 0) parts.push(`${state.apiErrors} API error${state.apiErrors === 1 ? "" : "s"}`);
  const line = parts.join(" · ").replace(/\s+/g, " ");
  return line.length > width ? `${line.slice(0, Math.max(1, width - 1))}…` : line;
}
