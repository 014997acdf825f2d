// Waits out a provider usage or rate limit: status `waiting` with the resume time, interruptible
// by signals, STOP, `stop --now` and `active: false`.
import type { LimitInfo } from "../agents/types.js";
import { stopRequested } from "./check-boundary.js";
import type { Ending } from "./finish-run.js";
import type { LoopState } from "./loop-state.js";

/** How long to wait when the provider gave no reset time: doubling from 1 minute up to 15 minutes. */
export function fallbackWaitMs(consecutiveLimits: number): number {
  return Math.min(15 * 60_000, 60_000 * 2 ** Math.max(0, consecutiveLimits - 1));
}

/** Waits until the limit resets; returns an Ending when the wait was cut short by a stop or a signal. */
export async function waitForLimit(loop: LoopState, iteration: number, limit: LimitInfo): Promise<Ending | null> {
  const { record, deps } = loop;
  loop.consecutiveLimits += 1;
  const now = deps.now().getTime();
  const resumeAt = limit.resetAt && limit.resetAt.getTime() > now ? limit.resetAt : new Date(now + fallbackWaitMs(loop.consecutiveLimits));
  record.update({ state: "waiting", resume_at: resumeAt.toISOString(), last_action: `usage limit: ${limit.message}` });
  record.event("waiting_limit", {
    iteration,
    message: limit.message,
    reset_at: limit.resetAt?.toISOString() ?? null,
    resume_at: resumeAt.toISOString(),
  });
  record.log(`usage limit reached (${limit.message}); waiting until ${resumeAt.toISOString()}, then retrying iteration ${iteration}`);
  for (;;) {
    const ending = stopRequested(loop);
    if (ending) return ending;
    if (loop.control.stopNow.aborted) return { reason: "STOPPED", detail: "stop --now while waiting for a usage limit" };
    const limitReached = loop.limitReached();
    if (limitReached) return limitReached;
    if (deps.now().getTime() >= resumeAt.getTime()) break;
    await loop.control.nextChange(deps.signals.interrupted);
  }
  record.update({ state: "running", resume_at: null, last_action: "usage limit wait over" });
  record.log(`usage limit wait over; retrying iteration ${iteration}`);
  return null;
}
