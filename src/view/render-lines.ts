// What a run shows, as toned segments: the terminal colours them, the dashboard styles them. Pure.
import type { RunEvent } from "../store/event-log.js";
import { tokenFigures, tokensText } from "../spend/spend-totals.js";

/** How a piece of a line is shown: a terminal colour or a dashboard style. */
export type Tone = "plain" | "bold" | "tool" | "dim" | "warn" | "error" | "done";

/** One piece of a rendered line. */
export interface Segment {
  tone: Tone;
  text: string;
}

const seg = (tone: Tone, text: string): Segment => ({ tone, text });

/** A token count as a person reads it: 950, 12.3k, 1.20M. */
export function tokenText(count: number): string {
  if (count < 1000) return String(count);
  if (count < 1_000_000) return `${(count / 1000).toFixed(1)}k`;
  return `${(count / 1_000_000).toFixed(2)}M`;
}

/** Elapsed time as 42s, 3m05s, 1h02m. */
function elapsedText(ms: number): string {
  const seconds = Math.max(0, Math.floor(ms / 1000));
  if (seconds < 60) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes}m${String(seconds % 60).padStart(2, "0")}s`;
  return `${Math.floor(minutes / 60)}h${String(minutes % 60).padStart(2, "0")}m`;
}

/** The total tokens of a `tokens` field (every kind: input, output, cache read, cache write), or null when there is none. */
export function tokensOf(value: unknown): number | null {
  return tokenFigures(value)?.total ?? null;
}

/** "3/10", or "3/∞" when there is no cap. */
function ofText(iteration: unknown, maxIterations: number): string {
  return `${String(iteration)}/${maxIterations === 0 ? "∞" : String(maxIterations)}`;
}

/** The header shown when an iteration starts. */
export function iterationHeaderSegments(event: RunEvent, maxIterations: number): Segment[] {
  const task = typeof event.task === "string" && event.task ? ` · task: ${event.task}` : "";
  return [seg("bold", `── iteration ${ofText(event.iteration, maxIterations)}${task} ──`)];
}

/** `[3/10] 4.2s done · 12.3k tokens · $0.0123 so far`; `spend` is null when the agent reports no cost. */
export function iterationSegments(event: RunEvent, maxIterations: number, spend: number | null): Segment[] {
  const seconds = typeof event.duration_ms === "number" ? `${(event.duration_ms / 1000).toFixed(1)}s` : "";
  const result = String(event.result);
  const failed = result === "failed" || result === "timeout";
  const shown = failed
    ? seg("error", `${result}${event.error ? ` (${String(event.error)})` : ""}`)
    : seg(result === "done" ? "done" : "plain", result);
  const tokens = tokenFigures(event.tokens);
  const estimated = event.cost_source === "computed" ? "~" : "";
  const tail = [
    tokens !== null ? `tokens ${tokensText(tokens)}` : null,
    spend !== null ? `${estimated}$${spend.toFixed(4)} so far` : null,
    ...resourceParts(event.resources),
  ].filter((part) => part !== null);
  return [
    seg("plain", `[${ofText(event.iteration, maxIterations)}] ${seconds} `),
    shown,
    ...(tail.length > 0 ? [seg("plain", ` · ${tail.join(" · ")}`)] : []),
  ];
}

/** A byte count as the live line shows it: `310.0 MiB`. */
export function mebibytes(bytes: number): string {
  return `${(bytes / 2 ** 20).toFixed(1)} MiB`;
}

/** ["cpu 1.2s", "mem 310.0 MiB", "14 procs"] from an iteration's resource figures (cgroup mode), or []. */
function resourceParts(resources: unknown): string[] {
  if (resources === null || typeof resources !== "object") return [];
  const figures = resources as Record<string, unknown>;
  const parts: string[] = [];
  if (typeof figures.cpu_seconds === "number") parts.push(`cpu ${figures.cpu_seconds.toFixed(1)}s`);
  if (typeof figures.peak_memory_bytes === "number") parts.push(`mem ${mebibytes(figures.peak_memory_bytes)}`);
  if (typeof figures.peak_pids === "number") parts.push(`${figures.peak_pids} procs`);
  return parts;
}

const PROMISE_REASONS: Record<string, string> = {
  echoed_prompt: "it is the prompt echoed back, not a claim",
  quoted: "it is inside quotes",
  code: "it is inside Markdown code",
  negated: "the message says it is not done (negated or conditional)",
  bare_phrase: "the promise text appears without the <promise> tag",
  iteration_failed: "the iteration failed",
  criteria_failing: "a completion check failed (its output goes into the next prompt)",
};

/** Why a promise in the final message did not end the run, or null when there is nothing to explain. */
export function promiseIgnoredSegments(event: RunEvent): Segment[] | null {
  const ignored = typeof event.promise_ignored === "string" ? event.promise_ignored : null;
  return ignored === null ? null : [seg("warn", `  promise ignored: ${PROMISE_REASONS[ignored] ?? ignored}`)];
}

const SKIPPED: Record<string, string> = {
  iteration_failed: "the iteration failed",
  dry_run: "a dry run starts nothing",
  promise_not_claimed: "they run once the promise is claimed",
};

/** The last lines a failed iteration's agent wrote to stderr (usually why it failed), or null. */
export function stderrTailSegments(event: RunEvent): Segment[] | null {
  const lines = Array.isArray(event.stderr_tail)
    ? event.stderr_tail.filter((line): line is string => typeof line === "string")
    : [];
  return lines.length === 0 ? null : [seg("error", lines.map((line) => `  stderr: ${line}`).join("\n"))];
}

/** Why the completion checks did not run, or null when they ran (or there are none). */
export function checksSkippedSegments(event: RunEvent): Segment[] | null {
  const skipped = typeof event.checks_skipped === "string" ? event.checks_skipped : null;
  return skipped === null ? null : [seg("dim", `  checks not run: ${SKIPPED[skipped] ?? skipped}`)];
}

/** One completion check's verdict. */
export function criterionSegments(event: RunEvent): Segment[] {
  const what = `${String(event.criterion)}: ${String(event.check)}`;
  if (event.passed === true) return [seg("done", `  check passed: ${what}`)];
  const detail =
    typeof event.detail === "string" && event.detail ? ` (${event.detail.split("\n")[0]?.slice(0, 200) ?? ""})` : "";
  return [seg("error", `  check FAILED: ${what}${detail}`)];
}

/** A reviewer's verdict (`review_verdict`): approved, changes asked for with the first finding, or no verdict and why. */
export function reviewSegments(event: RunEvent): Segment[] {
  const who = String(event.reviewer);
  const first =
    typeof event.findings === "string"
      ? (event.findings
          .split("\n")
          .find((line) => line.trim() !== "")
          ?.trim()
          .slice(0, 200) ?? "")
      : "";
  switch (event.verdict) {
    case "approve":
      return [seg("done", `  review approved: ${who}`)];
    case "changes":
      return [seg("warn", `  review asks for changes: ${who}${first ? ` (${first})` : ""}`)];
    default:
      return [
        seg(
          "error",
          `  review not approved: ${who} gave no verdict that counts (${String(event.reason ?? "no verdict").slice(0, 200)})`,
        ),
      ];
  }
}

/** The agent's message, tool call, tool result, retry or error as --live shows it; null for what it does not show. */
export function liveSegments(event: RunEvent): Segment[] | null {
  const text = typeof event.text === "string" ? event.text : "";
  switch (event.kind) {
    case "text":
      return text ? [seg("plain", `  ${text.replace(/\n/g, "\n  ")}`)] : null;
    case "tool_use":
      return [seg("tool", `  → ${String(event.tool ?? "tool")}${text ? ` ${text}` : ""}`)];
    case "tool_result":
      return text ? [seg("dim", `    ${text.split("\n")[0]?.slice(0, 200)}`)] : null;
    case "stderr":
      // Marked as the agent's stderr, in the order it was written among its other output.
      return text ? [seg("warn", `  stderr: ${text.replace(/\n/g, "\n  stderr: ")}`)] : null;
    case "error":
    case "retry":
      return [seg("error", `  ! ${text}`)];
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
  /** Whether the agent is a model CLI that thinks between tools (false: a command, whose silence says nothing). */
  thinks?: boolean;
}

/** The one-line status of a running iteration, cut to `width` columns. */
export function statusLine(state: StatusLineState, width: number): string {
  const parts = [`[${ofText(state.iteration, state.maxIterations)}] ${elapsedText(state.elapsedMs)}`];
  if (state.tokens !== null) parts.push(`${tokenText(state.tokens)} tokens`);
  if (state.spend !== null) parts.push(`$${state.spend.toFixed(4)}`);
  if (state.tool) parts.push(`tool: ${state.tool}`);
  else if (state.thinks !== false) parts.push("thinking");
  if (state.retries > 0) parts.push(`${state.retries} ${state.retries === 1 ? "retry" : "retries"}`);
  if (state.apiErrors > 0) parts.push(`${state.apiErrors} API error${state.apiErrors === 1 ? "" : "s"}`);
  const line = parts.join(" · ").replace(/\s+/g, " ");
  return line.length > width ? `${line.slice(0, Math.max(1, width - 1))}…` : line;
}

/** One rendered line per text line: an event may carry several lines of output (they are coalesced). */
function splitLines(segments: Segment[]): Segment[][] {
  const lines: Segment[][] = [[]];
  for (const { tone, text } of segments) {
    text.split("\n").forEach((part, index) => {
      if (index > 0) lines.push([]);
      if (part) lines.at(-1)?.push(seg(tone, part));
    });
  }
  return lines;
}

/** Turns a run's events and log lines into the lines `ralph run --live` prints, for a view without a terminal. */
export interface LineRenderer {
  event(event: RunEvent): Segment[][];
  log(line: string): Segment[] | null;
}

/**
 * A LineRenderer starting with iteration cap `maxIterations` (run_started and iteration_started update it):
 * the iteration header, the agent's output, the iteration line, then its check verdicts and decisions.
 */
export function createLineRenderer(maxIterations: number): LineRenderer {
  let cap = maxIterations;
  let spend: number | null = null;
  let criteria: Segment[][] = [];
  return {
    event(event) {
      // The cap may change mid-run: every iteration says which one it ran under.
      if (
        (event.type === "run_started" || event.type === "iteration_started") &&
        typeof event.max_iterations === "number"
      ) {
        cap = event.max_iterations;
      }
      switch (event.type) {
        case "iteration_started":
          criteria = [];
          return [iterationHeaderSegments(event, cap)];
        case "agent_event": {
          const line = liveSegments(event);
          return line ? splitLines(line) : [];
        }
        case "criteria_checked":
          // Shown after the iteration's own line, which is only known once the iteration is recorded; a review by its review_verdict.
          if (event.criterion !== "review") criteria.push(criterionSegments(event));
          return [];
        case "review_verdict":
          criteria.push(reviewSegments(event));
          return [];
        case "iteration_ended": {
          if (typeof event.cost_usd === "number" || spend !== null)
            spend = typeof event.cost_total_usd === "number" ? event.cost_total_usd : spend;
          const decisions = [promiseIgnoredSegments(event), checksSkippedSegments(event)].filter(
            (line) => line !== null,
          );
          const why = stderrTailSegments(event);
          return [
            iterationSegments(event, cap, spend),
            ...(why ? splitLines(why) : []),
            ...criteria.splice(0),
            ...decisions,
          ];
        }
        default:
          return [];
      }
    },
    log(line) {
      if (line.startsWith("===") || line.startsWith("run ended:")) return null;
      return [seg("dim", line)];
    },
  };
}
