// All user-facing wording of a run: per-iteration lines, agent output with --live, the final summary.
import pc from "picocolors";
import type { RunResult } from "../loop/finish-run.js";
import type { RecordListener } from "../loop/run-record.js";
import type { RunEvent } from "../store/event-log.js";

/** How a run is shown on the terminal. */
export interface RenderMode {
  json: boolean;
  live: boolean;
  maxIterations: number;
}

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
  const print = (line: string) => {
    if (!closed) out.write(`${line}\n`);
  };
  return {
    event(event: RunEvent) {
      if (mode.json) return print(JSON.stringify(event));
      // The cap may change mid-run (state.md): every iteration says which one it ran under.
      if ((event.type === "run_started" || event.type === "iteration_started") && typeof event.max_iterations === "number") {
        maxIterations = event.max_iterations;
      }
      if (event.type === "iteration_ended") {
        total = typeof event.cost_total_usd === "number" ? event.cost_total_usd : total;
        print(iterationLine(event, maxIterations, total));
      }
      if (event.type === "agent_event" && mode.live) {
        const line = liveLine(event);
        if (line !== null) print(line);
      }
    },
    log(line: string) {
      if (mode.json) return;
      if (line.startsWith("===") || line.startsWith("run ended:")) return;
      print(pc.dim(line));
    },
  };
}

function iterationLine(event: RunEvent, maxIterations: number, totalUsd: number): string {
  const of = maxIterations === 0 ? "∞" : String(maxIterations);
  const seconds = typeof event.duration_ms === "number" ? `${(event.duration_ms / 1000).toFixed(1)}s` : "";
  const result = String(event.result);
  const shown = result === "failed" || result === "timeout" ? pc.red(`${result}${event.error ? ` (${String(event.error)})` : ""}`) : result === "done" ? pc.green(result) : result;
  return `[${String(event.iteration)}/${of}] ${seconds} ${shown} · $${totalUsd.toFixed(4)} so far${resourceText(event.resources)}`;
}

/** " · cpu 1.2s · mem 310 MiB · 14 procs" from an iteration's resource figures, or "". */
function resourceText(resources: unknown): string {
  if (resources === null || typeof resources !== "object") return "";
  const figures = resources as Record<string, unknown>;
  const parts: string[] = [];
  if (typeof figures.cpu_seconds === "number") parts.push(`cpu ${figures.cpu_seconds.toFixed(1)}s`);
  if (typeof figures.peak_memory_bytes === "number") parts.push(`mem ${(figures.peak_memory_bytes / 2 ** 20).toFixed(1)} MiB`);
  if (typeof figures.peak_pids === "number") parts.push(`${figures.peak_pids} procs`);
  return parts.map((part) => ` · ${part}`).join("");
}

function liveLine(event: RunEvent): string | null {
  const text = typeof event.text === "string" ? event.text : "";
  switch (event.kind) {
    case "text":
      return text ? `  ${text.replace(/\n/g, "\n  ")}` : null;
    case "tool_use":
      return pc.cyan(`  → ${String(event.tool ?? "tool")}${text ? ` ${text}` : ""}`);
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
