// The one place a run ends: every exit reason goes through here and leaves the completion marker.
import { appendCompletionMarker, holdCompletionMarker } from "../store/progress-log.js";
import { RunFileError } from "../store/regular-file.js";
import { exitCodeFor, type ExitReason, type InterruptSignal } from "../exit/exit-reasons.js";
import { RunRecord, type RecordListener } from "./run-record.js";
import type { RunStatus } from "../store/status-file.js";
import { dirname, resolve } from "node:path";
import { spendOf } from "../spend/spend-of.js";
import { spendJson } from "../spend/spend-totals.js";

/** How a run ended, as decided by the loop. */
export interface Ending {
  reason: ExitReason;
  /** One line saying why, for the log and the summary. */
  detail: string;
  /** The signal, for INTERRUPTED. */
  signal?: InterruptSignal;
  /** The agent CLI that could not be started (not installed): nothing ran, so there is no output to read. */
  agentMissing?: string;
}

/** The outcome of a finished run, for the CLI to render and exit with. */
export interface RunResult extends Ending {
  exitCode: number;
  runId: string;
  runDir: string;
  iterations: number;
  costUsd: number;
  /** False when the completion marker could not be written yet (a full disk): holdMarker waits to write it. */
  marked: boolean;
}

/**
 * The last resort when the runner is forced out (a second signal while teardown is still running): the run
 * of `progressFile` is finished as any run is (status.json ended, run_ended, the marker) when this process
 * still has its record open, else the marker is appended unless this runner wrote it. Synchronous, so it
 * can run just before exiting; a write that fails (a full disk) is given up, never thrown at a process that
 * is about to die.
 */
export function markEndedIfNot(progressFile: string, reason: ExitReason, signal?: InterruptSignal): void {
  try {
    const record = [...RunRecord.unfinished].find((open) => resolve(open.paths.progress) === resolve(progressFile));
    if (record) {
      const detail = "ended at once by a second signal, before its teardown was done";
      finishRun(record, { reason, detail, ...(signal ? { signal } : {}) }, new Date());
    }
  } catch {
    // The marker below is what matters most.
  }
  // Whether this runner wrote its marker is known here, not read back: an agent may have appended a forged one.
  try {
    if (!markedByThisRunner.has(progressFile)) appendCompletionMarker(progressFile, reason);
  } catch {
    // nothing more can be done on the way out
  }
}

/** progress.txt files this process has written the completion marker to. */
const markedByThisRunner = new Set<string>();

/** The project of a run directory (`PROJECT/.ralph/runs/ID`). */
function projectOfRun(runDir: string): string {
  return dirname(dirname(dirname(runDir)));
}

/**
 * Records the ending everywhere (status, progress marker, run_ended event, log) and returns the result.
 * `last` holds status fields the ending step changed (e.g. the spend of an interrupted iteration).
 */
export function finishRun(record: RunRecord, ending: Ending, now: Date, last: Partial<RunStatus> = {}): RunResult {
  RunRecord.unfinished.delete(record);
  const exitCode = exitCodeFor(ending.reason, ending.signal);
  const detail = record.redactor.text(ending.detail);
  record.stopHeartbeat();
  // After a failed write (a full disk) the space set aside at the start makes room for recording the end.
  if (record.guard.failure) record.guard.release();
  const steps: Array<() => void> = [
    () => record.log(`run ended: ${ending.reason} (${detail})`),
    () =>
      record.update({
        ...last,
        state: "ended",
        ended_at: now.toISOString(),
        exit_reason: ending.reason,
        exit_code: exitCode,
        last_action: detail,
      }),
    () =>
      record.event({
        type: "run_ended",
        reason: ending.reason,
        exit_code: exitCode,
        detail,
        spend: spendJson(spendOf(projectOfRun(record.paths.dir), record.status.run_id)),
      }),
  ];
  // Each step is attempted even if an earlier one fails (e.g. a full disk), and the marker always comes last.
  for (const step of steps) {
    try {
      step();
    } catch {
      // The marker below is what matters most; nothing else can be done about a failed write here.
    }
  }
  let marked: boolean;
  try {
    marked = record.guard.attempt(() => appendCompletionMarker(record.paths.progress, ending.reason));
    if (marked) markedByThisRunner.add(record.paths.progress);
  } catch (error) {
    // progress.txt replaced by a link or FIFO: never written through, and no use waiting for it (as for a
    // full disk); status.json above holds the ending.
    if (!(error instanceof RunFileError)) throw error;
    marked = true;
  }
  record.guard.release();
  record.close();
  return {
    ...ending,
    detail,
    marked,
    exitCode,
    runId: record.status.run_id,
    runDir: record.paths.dir,
    iterations: record.status.iteration,
    costUsd: record.status.cost_usd,
  };
}

/**
 * When finishRun could not write the completion marker (a full disk): says so and writes it once there is room,
 * until `urgent` aborts (a second signal). `marked` says whether it is written.
 */
export async function holdMarker(
  result: RunResult,
  progressFile: string,
  listener: RecordListener,
  urgent: AbortSignal,
): Promise<RunResult> {
  if (result.marked) return result;
  listener.log(`waiting for disk space to write the end of the run to ${progressFile}`);
  return { ...result, marked: await holdCompletionMarker(progressFile, result.reason, urgent) };
}
