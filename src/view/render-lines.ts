// The words of --live output as toned segments: the terminal colours them, the dashboard styles them.
import type { RunEvent } from "../store/event-log.js";

/** How a piece of a line is shown: a terminal colour or a dashboard style. */
export type Tone = "plain" | "tool" | "dim" | "error" | "done";

/** One piece of a rendered line. */
export interface Segment {
  tone: Tone;
  text: string;
}

/** `[3/10] 4.2s done · $0.0123 so far`: the line printed when an iteration ends. */
export function iterationSegments(event: RunEvent, maxIterations: number, totalUsd: number): Segment[] {
  const of = maxIterations === 0 ? "∞" : String(maxIterations);
  const seconds = typeof event.duration_ms === "number" ? `${(event.duration_ms / 1000).toFixed(1)}s` : "";
  const result = String(event.result);
  const failed = result === "failed" || result === "timeout";
  const shown: Segment = failed
    ? { tone: "error", text: `${result}${event.error ? ` (${String(event.error)})` : ""}` }
    : { tone: result === "done" ? "done" : "plain", text: result };
  return [{ tone: "plain", text: `[${String(event.iteration)}/${of}] ${seconds} ` }, shown, { tone: "plain", text: ` · $${totalUsd.toFixed(4)} so far` }];
}

/** The agent's message, tool call, tool result or error as --live shows it; null for what it does not show. */
export function liveSegments(event: RunEvent): Segment[] | null {
  const text = typeof event.text === "string" ? event.text : "";
  switch (event.kind) {
    case "text":
      return text ? [{ tone: "plain", text: `  ${text.replace(/\n/g, "\n  ")}` }] : null;
    case "tool_use":
      return [{ tone: "tool", text: `  → ${String(event.tool ?? "tool")}${text ? ` ${text}` : ""}` }];
    case "tool_result":
      return text ? [{ tone: "dim", text: `    ${text.split("\n")[0]?.slice(0, 200)}` }] : null;
    case "error":
      return [{ tone: "error", text: `  ! ${text}` }];
    default:
      return null;
  }
}

/** Turns a run's events and log lines into the lines `ralph run` prints (--live adds the agent's output). */
export interface LineRenderer {
  event(event: RunEvent): Segment[] | null;
  log(line: string): Segment[] | null;
}

/** A LineRenderer starting with iteration cap `maxIterations` (run_started and iteration_started update it). */
export function createLineRenderer(live: boolean, maxIterations: number): LineRenderer {
  let cap = maxIterations;
  let total = 0;
  return {
    event(event) {
      // The cap may change mid-run (state.md): every iteration says which one it ran under.
      if ((event.type === "run_started" || event.type === "iteration_started") && typeof event.max_iterations === "number") {
        cap = event.max_iterations;
      }
      if (event.type === "iteration_ended") {
        total = typeof event.cost_total_usd === "number" ? event.cost_total_usd : total;
        return iterationSegments(event, cap, total);
      }
      return event.type === "agent_event" && live ? liveSegments(event) : null;
    },
    log(line) {
      if (line.startsWith("===") || line.startsWith("run ended:")) return null;
      return [{ tone: "dim", text: line }];
    },
  };
}
