// Why a run ended, and the process exit code each reason maps to (SPEC section 5).
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

const SIGNAL_NUMBERS: Record<InterruptSignal, number> = { SIGHUP: 1, SIGINT: 2, SIGQUIT: 3, SIGTERM: 15 };

/** The exit code a shell sees for a reason (128 + signal number for INTERRUPTED). */
export function exitCodeFor(reason: ExitReason, signal: InterruptSignal = "SIGINT"): number {
  switch (reason) {
    case "DONE":
    case "NO_WORK":
    case "STOPPED":
      return 0;
    case "MAX_ITERATIONS":
    case "BUDGET_EXCEEDED":
    case "RUNTIME_EXCEEDED":
      return 3;
    case "FAILED":
    case "STALLED":
      return 1;
    case "INTERRUPTED":
      return 128 + SIGNAL_NUMBERS[signal];
    default: {
      const unreachable: never = reason;
      throw new Error(`unknown exit reason ${String(unreachable)}`);
    }
  }
}

/** Whether a string names an exit reason. */
export function isExitReason(value: string): value is ExitReason {
  return (EXIT_REASONS as readonly string[]).includes(value);
}
