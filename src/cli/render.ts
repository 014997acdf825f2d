// All user-facing wording of a run: per-iteration lines, agent output with --live, the final summary.
// The renderer is one consumer of the run's event stream (events.jsonl is another).
import pc from "picocolors";
import type { RunResult } from "../run/finish-run.js";
import type { RecordListener } from "../run/run-record.js";
import type { RunEvent } from "../store/event-log.js";

/** How a run is shown on the terminal. */
export interface RenderMode {
  json: boolean;
  live: boolean;
  maxIterations: number;
}

type EventOf<T extends RunEvent["type"]> = Extract<RunEvent, { type: T }>;

/** A listener that prints a run's progress to `out` in the chosen mode. */
export function createRenderer(mode: RenderMode, out: NodeJS.WritableStream = process.stdout): RecordListener {
  let maxIterations = mode.maxIterations;
  let total = 0;
  // A reader that goes away (`ralph run … | head`) must not take the run with it: the run's files are
  // its record, the terminal only a view of it.
  let closed = false;
  out.on("error", () => {
    closed = true;
  });
  const print = (line: string | null) => {
    if (!closed && line !== null) out.write(`${line}\n`);
  };
  return {
    event(event: RunEvent) {
      if (mode.json) return print(JSON.stringify(event));
      switch (event.type) {
        case "run_started":
        case "iteration_started":
          // The cap may change mid-run (state.md): every iteration says which one it ran under.
          if (typeof event.max_iterations === "number") maxIterations = event.max_iterations;
          return;
        case "iteration_ended":
          total = typeof event.cost_total_usd === "number" ? event.cost_total_usd : total;
          return print(iterationLine(event, maxIterations, total));
        case "agent_event":
          return mode.live ? print(liveLine(event)) : undefined;
        case "paused":
        case "resumed":
        case "waiting_limit":
        case "criteria_checked":
        case "run_ended":
          // Said by the log lines that go with them, and by the summary.
          return;
        default: {
          const unreachable: never = event;
          throw new Error(`unknown event ${JSON.stringify(unreachable)}`);
        }
      }
    },
    log(line: string) {
      if (mode.json) return;
      if (line.startsWith("===") || line.startsWith("run ended:")) return;
      print(pc.dim(line));
    },
  };
}

function iterationLine(event: EventOf<"iteration_ended">, maxIterations: number, totalUsd: number): string {
  const of = maxIterations === 0 ? "∞" : String(maxIterations);
  const seconds = typeof event.duration_ms === "number" ? `${(event.duration_ms / 1000).toFixed(1)}s` : "";
  const result = event.result;
  const shown = result === "failed" || result === "timeout" ? pc.red(`${result}${event.error ? ` (${event.error})` : ""}`) : result === "done" ? pc.green(result) : result;
  return `[${event.iteration}/${of}] ${seconds} ${shown} · $${totalUsd.toFixed(4)} so far`;
}

function liveLine(event: EventOf<"agent_event">): string | null {
  const text = event.text ?? "";
  switch (event.kind) {
    case "text":
      return text ? `  ${text.replace(/\n/g, "\n  ")}` : null;
    case "tool_use":
      return pc.cyan(`  → ${event.tool ?? "tool"}${text ? ` ${text}` : ""}`);
    case "tool_result":
      return text ? pc.dim(`    ${text.split("\n")[0]?.slice(0, 200)}`) : null;
    case "error":
      return pc.red(`  ! ${text}`);
    default:
      return null;
  }
}

/** The closing lines of a run. */
export function summaryLines(result: RunResult): string[] {
  const colour = result.exitCode === 0 ? pc.green : result.reason === "INTERRUPTED" ? pc.yellow : pc.red;
  return [
    colour(`${result.reason}: ${result.detail}`),
    `${result.iterations} iteration${result.iterations === 1 ? "" : "s"}, $${result.costUsd.toFixed(4)} (agent CLI's estimate), exit code ${result.exitCode}`,
    `run directory: ${result.runDir}`,
  ];
}
