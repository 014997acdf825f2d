// `ralph hook cancel`: `active: false` in the state file, and STOPPED recorded at once.
//
// Recording at once (rather than at the next stop) matters when the session is gone: no hook would ever run
// again, and the run would be listed as running forever. If a hook holds the lock (it is checking criteria),
// only `active: false` is written; that hook re-reads the file before it continues and records STOPPED itself.
import { hookFiles } from "./hook-files.js";
import { endHookLoop, hasEnded, openHookRun, type HookClock } from "./hook-run.js";
import { patchHookLoop, readHookLoop } from "./hook-loop-file.js";
import { withLoopLock } from "./loop-lock.js";

/** What cancel found and did. */
export type CancelOutcome =
  | { kind: "none" }
  | { kind: "cancelled"; runId: string | null; iteration: number | null; recorded: boolean }
  | { kind: "already_inactive"; runId: string | null; recorded: boolean };

const DETAIL = "cancelled with ralph hook cancel";

/** Cancels the project's in-session loop, if any. */
export async function cancelHookLoop(projectDir: string, clock: HookClock, lockWaitMs = 3000): Promise<CancelOutcome> {
  const files = hookFiles(projectDir);
  const locked = await withLoopLock(files.lock, clock, lockWaitMs, async () => cancelLocked(projectDir, clock));
  if (locked.ok) return locked.value;
  const read = readHookLoop(files.loop);
  patchHookLoop(files.loop, { active: false });
  return read.kind === "ok"
    ? { kind: "cancelled", runId: read.loop.runId, iteration: read.loop.iteration, recorded: false }
    : { kind: "cancelled", runId: read.kind === "corrupt" ? read.runId : null, iteration: null, recorded: false };
}

function cancelLocked(projectDir: string, clock: HookClock): CancelOutcome {
  const files = hookFiles(projectDir);
  const read = readHookLoop(files.loop);
  if (read.kind === "missing") return { kind: "none" };
  const runId = read.kind === "ok" ? read.loop.runId : read.runId;
  const record = runId ? openHookRun(projectDir, runId, clock) : null;
  const wasActive = read.kind === "corrupt" || read.loop.active;
  if (!wasActive && (!record || hasEnded(record))) return { kind: "already_inactive", runId, recorded: false };
  const ended = endHookLoop(
    files.loop,
    record,
    { reason: "STOPPED", detail: wasActive ? DETAIL : "active: false in the state file" },
    clock,
  );
  if (!wasActive) return { kind: "already_inactive", runId, recorded: ended !== null };
  return {
    kind: "cancelled",
    runId,
    iteration: read.kind === "ok" ? read.loop.iteration : null,
    recorded: ended !== null,
  };
}
