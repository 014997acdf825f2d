// The check at every iteration boundary: signals, state.md, STOP and PAUSE (SPEC section 4).
import { readSentinels } from "./control-watch.js";
import type { Ending } from "./finish-run.js";
import type { LoopState } from "./loop-state.js";

/** An Ending when the loop must stop here; waits while paused; null to go on. */
export async function checkBoundary(loop: LoopState): Promise<Ending | null> {
  let paused = false;
  for (;;) {
    const ending = stopRequested(loop);
    if (ending) {
      if (paused) loop.record.log("resumed (to stop)");
      return ending;
    }
    const wantsPause = readSentinels(loop.record.paths).pause;
    if (!wantsPause) {
      if (paused) {
        loop.record.log("resumed");
        loop.record.event("resumed");
        loop.record.update({ state: "running", last_action: "resumed" });
      }
      return null;
    }
    if (!paused) {
      paused = true;
      loop.record.log("paused");
      loop.record.event("paused");
      loop.record.update({ state: "paused", last_action: "paused by PAUSE file" });
    }
    await loop.control.nextChange(loop.deps.signals.interrupted);
  }
}

/** INTERRUPTED, or STOPPED for a STOP file or `active: false`; re-reads state.md as a side effect. */
export function stopRequested(loop: LoopState): Ending | null {
  const interrupted = loop.interruption();
  if (interrupted) return interrupted;
  refreshState(loop);
  if (!loop.state.active) return { reason: "STOPPED", detail: "state.md says active: false" };
  const sentinels = readSentinels(loop.record.paths);
  if (sentinels.stop) return { reason: "STOPPED", detail: sentinels.stopNow ? "stop --now requested" : "STOP file present" };
  return null;
}

/** Re-reads state.md (a person's edit between iterations); a broken file is logged once and the last good state is kept. */
function refreshState(loop: LoopState): void {
  loop.serveSetRequests();
  const before = loop.state.maxIterations;
  const read = loop.guard.atBoundary();
  if (read.kind !== "broken") {
    if (loop.stateProblem) loop.record.log("state.md is readable again");
    loop.stateProblem = null;
    if (read.kind === "changed" && read.state.maxIterations !== before) loop.record.log(`max_iterations changed to ${read.state.maxIterations} in state.md`);
    loop.syncCap(before);
    return;
  }
  if (loop.stateProblem !== read.message) {
    loop.stateProblem = read.message;
    loop.record.log(`ignoring state.md until it is fixed (the last good version stays in force): ${read.message}`);
  }
}
