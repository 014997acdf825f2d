// The one place a run ends: every exit reason goes through here and leaves the completion marker.
import { appendCompletionMarker, readCompletion } from "../store/progress-log.js";
import { exitCodeFor, type ExitReason, type InterruptSignal } from "../exit/exit-reasons.js";
import type { RunRecord } from "./run-record.js";
import type { RunStatus } from "../store/status-file.js";

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
  if (!readCompletion(progressFile).ended) appendCompletionMarker(progressFile, reason);
}

/**
 * Records the ending everywhere (status, progress marker, run_ended event, log) and returns the result.
 * `last` holds status fields the ending step changed (e.g. the spend of an interrupted iteration).
 */
export function finishRun(record: RunRecord, ending: Ending, now: Date, last: Partial<RunStatus> = {}): RunResult {
  const exitCode = exitCodeFor(ending.reason, ending.signal);
  record.stopHeartbeat();
  const steps: Array<() => void> = [
    () => record.log(`run ended: ${ending.reason} (${ending.detail})`),
    () =>
      record.update({
        ...last,
        state: "ended",
        ended_at: now.toISOString(),
        exit_reason: ending.reason,
        exit_code: exitCode,
        last_action: ending.detail,
      }),
    () => record.event({ type: "run_ended", reason: ending.reason, exit_code: exitCode, detail: ending.detail }),
  ];
  // Each step is attempted even if an earlier one fails (e.g. a full disk), and the marker always comes last.
  for (const step of steps) {
    try {
      step();
    } catch {
      // The marker below is what matters most; nothing else can be done about a failed write here.
    }
  }
  appendCompletionMarker(record.paths.progress, ending.reason);
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
