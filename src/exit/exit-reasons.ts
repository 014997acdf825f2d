// Why a run ended, and the one table of process exit codes each reason maps to.
import { constants } from "node:os";
export const EXIT_REASONS = [
  "DONE",
  "NO_WORK",
  "STOPPED",
  "MAX_ITERATIONS",
  "BUDGET_EXCEEDED",
  "RUNTIME_EXCEEDED",
  "FAILED",
  "STALLED",
  "INTERRUPTED",
] as const;

/** A run's exit reason. */
export type ExitReason = (typeof EXIT_REASONS)[number];

/** Signals that interrupt a run; the runner dies of the same signal. */
export type InterruptSignal = "SIGINT" | "SIGTERM" | "SIGHUP" | "SIGQUIT";

/** The exit code of each reason; INTERRUPTED has none of its own: the runner dies of the signal (128 + n). */
const EXIT_CODES: Readonly<Record<Exclude<ExitReason, "INTERRUPTED">, number>> = {
  DONE: 0,
  NO_WORK: 0,
  STOPPED: 0,
  MAX_ITERATIONS: 3,
  BUDGET_EXCEEDED: 3,
  RUNTIME_EXCEEDED: 3,
  FAILED: 1,
  STALLED: 1,
};

/** The exit code a shell sees for a reason (128 + the signal's number for INTERRUPTED). */
export function exitCodeFor(reason: ExitReason, signal: InterruptSignal = "SIGINT"): number {
  return reason === "INTERRUPTED" ? signalExitStatus(signal) : EXIT_CODES[reason];
}

/** 128 + the signal's number: the status a shell reports for a process that died of `signal`. */
export function signalExitStatus(signal: NodeJS.Signals): number {
  return 128 + constants.signals[signal];
}

/** Whether a string names an exit reason. */
export function isExitReason(value: string): value is ExitReason {
  return (EXIT_REASONS as readonly string[]).includes(value);
}

/** When each reason ends a run, in a few words (docs/reference/exit-codes.md is written from these). */
export const EXIT_REASON_MEANINGS: Readonly<Record<ExitReason, string>> = {
  DONE: "the promise and/or every completion criterion was satisfied",
  NO_WORK: "the task list had nothing open",
  STOPPED: "a STOP file (ralph stop) or `active: false` in state.md",
  MAX_ITERATIONS: "the iteration cap (-n) was reached",
  BUDGET_EXCEEDED: "the recorded spend reached --max-cost",
  RUNTIME_EXCEEDED: "the run lasted --max-runtime",
  FAILED: "consecutive failed iterations, the same failure again, an agent that cannot start, an internal error",
  STALLED: "iterations without a change to the git tree, HEAD or the task list",
  INTERRUPTED: "SIGINT, SIGTERM or SIGHUP: ralph dies of the same signal (128 + its number); SIGQUIT: exit 131",
};

/** The exit code of a usage error: bad flags, config or files, and nothing was started. */
export const USAGE_EXIT_CODE = 2;
