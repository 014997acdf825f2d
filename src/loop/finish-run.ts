// The one place a run ends: every exit reason goes through here and leaves the completion marker.
import { appendCompletionMarker } from "../store/progress-log.js";
import { RunFileError } from "../store/regular-file.js";
import { exitCodeFor, type ExitReason, type InterruptSignal } from "./exit-reasons.js";
import type { RunRecord } from "./run-record.js";

/** How a run ended, as decided by the loop. */
export interface Ending {
  reason: ExitReason;
  /** One line saying why, for the log and the summary. */
  detail: string;
  /** The signal, for INTERRUPTED. */
  signal?: InterruptSignal;
}

/** The outcome of a finished run, for the CLI to render and exit with. */
export interface RunResult extends Ending {
  exitCode: number;
  runId: string;
  runDir: string;
  iterations: number;
  costUsd: number;
}

/**
 * The last resort when the runner is forced out (a second signal while teardown is still running):
 * appends the marker unless the run already has one. Synchronous, so it can run just before exiting.
 */
export function markEndedIfNot(progressFile: string, reason: ExitReason): void {
  // Whether this runner wrote its marker is known here, not read back: an agent may have appended a forged one.
  if (!markedByThisRunner.has(progressFile)) appendCompletionMarker(progressFile, reason);
}

/** progress.txt files this process has written the completion marker to. */
const markedByThisRunner = new Set<string>();

/** Records the ending everywhere (status, progress marker, run_ended event, log) and returns the result. */
export function finishRun(record: RunRecord, ending: Ending, now: Date): RunResult {
  const exitCode = exitCodeFor(ending.reason, ending.signal);
  record.stopHeartbeat();
  const steps: Array<() => void> = [
    () => record.log(`run ended: ${ending.reason} (${ending.detail})`),
    () =>
      record.update({
        state: "ended",
        ended_at: now.toISOString(),
        exit_reason: ending.reason,
        exit_code: exitCode,
        last_action: ending.detail,
      }),
    () => record.event("run_ended", { reason: ending.reason, exit_code: exitCode, detail: ending.detail }),
  ];
  // Each step is attempted even if an earlier one fails (e.g. a full disk), and the marker always comes last.
  for (const step of steps) {
    try {
      step();
    } catch {
      // The marker below is what matters most; nothing else can be done about a failed write here.
    }
  }
  try {
    appendCompletionMarker(record.paths.progress, ending.reason);
    markedByThisRunner.add(record.paths.progress);
  } catch (error) {
    // progress.txt replaced by a link or FIFO: never written through; status.json above holds the ending.
    if (!(error instanceof RunFileError)) throw error;
  }
  record.close();
  return {
    ...ending,
    exitCode,
    runId: record.status.run_id,
    runDir: record.paths.dir,
    iterations: record.status.iteration,
    costUsd: record.status.cost_usd,
  };
}
