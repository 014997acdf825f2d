// All user-facing wording of a run: per-iteration lines, agent output with --live, the final summary.
import pc from "picocolors";
import type { RunResult } from "../loop/finish-run.js";
import type { RecordListener } from "../loop/run-record.js";
import type { RunEvent } from "../store/event-log.js";
import { createLineRenderer, type Segment, type Tone } from "../view/render-lines.js";

/** How a run is shown on the terminal. */
export interface RenderMode {
  json: boolean;
  live: boolean;
  maxIterations: number;
}

const TONES: Record<Tone, (text: string) => string> = {
  plain: (text) => text,
  tool: pc.cyan,
  dim: pc.dim,
  error: pc.red,
  done: pc.green,
};

/** A line's segments in terminal colours. */
export function paint(segments: Segment[]): string {
  return segments.map((segment) => TONES[segment.tone](segment.text)).join("");
}

/** A listener that prints a run's progress to `out` in the chosen mode. */
export function createRenderer(mode: RenderMode, out: NodeJS.WritableStream = process.stdout): RecordListener {
  const lines = createLineRenderer(mode.live, mode.maxIterations);
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
      const segments = lines.event(event);
      print(segments && paint(segments));
    },
    log(line: string) {
      const segments = mode.json ? null : lines.log(line);
      print(segments && paint(segments));
    },
  };
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
