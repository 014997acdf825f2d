// The limit and stop rules every driver of a run applies alike: the engine between iterations, the
// `--parallel` parent over its children, hook mode at each Stop.
import type { Ending } from "../run/finish-run.js";
import type { SentinelState } from "./control-files.js";

/** A run's limits (0 iterations and null: none). */
export interface Limits {
  maxIterations: number;
  maxRuntimeMs: number | null;
  maxCostUsd: number | null;
}

/** What a run has used so far. */
export interface Used {
  iterations: number;
  elapsedMs: number;
  costUsd: number;
}

/** MAX_ITERATIONS, RUNTIME_EXCEEDED or BUDGET_EXCEEDED once a limit is reached (in that order); null to go on. */
export function limitEnding(limits: Limits, used: Used): Ending | null {
  if (limits.maxIterations > 0 && used.iterations >= limits.maxIterations)
    return { reason: "MAX_ITERATIONS", detail: `reached max_iterations ${limits.maxIterations}` };
  if (limits.maxRuntimeMs !== null && used.elapsedMs >= limits.maxRuntimeMs) {
    return {
      reason: "RUNTIME_EXCEEDED",
      detail: `ran ${Math.round(used.elapsedMs / 1000)}s, limit ${Math.round(limits.maxRuntimeMs / 1000)}s`,
    };
  }
  if (limits.maxCostUsd !== null && used.costUsd >= limits.maxCostUsd) {
    return {
      reason: "BUDGET_EXCEEDED",
      detail: `spent $${used.costUsd.toFixed(4)} (CLI estimate), limit $${limits.maxCostUsd}`,
    };
  }
  return null;
}

/** What is left of a `--max-cost` budget once `spentUsd` is spent (never below 0); null when there is no budget. */
export function remainingBudgetUsd(maxCostUsd: number | null, spentUsd: number): number | null {
  return maxCostUsd === null ? null : Math.max(0, maxCostUsd - spentUsd);
}

/**
 * What is left of a `--max-runtime` cap once `elapsedMs` have passed, as a cap for a run started now: in whole
 * seconds (the unit `--max-runtime` is given in), rounded down so that it never ends after the cap, and at least
 * one second; null when there is no cap.
 */
export function remainingRuntimeMs(maxRuntimeMs: number | null, elapsedMs: number): number | null {
  return maxRuntimeMs === null ? null : Math.max(1, Math.floor((maxRuntimeMs - elapsedMs) / 1000)) * 1000;
}

/** STOPPED when a STOP file is there; `what` says what stopping does in this mode (for a plain stop and for `now`). */
export function stopEnding(
  sentinels: Pick<SentinelState, "stop" | "stopNow">,
  what: { stop: string; now: string },
): Ending | null {
  if (!sentinels.stop) return null;
  return { reason: "STOPPED", detail: sentinels.stopNow ? what.now : what.stop };
}
