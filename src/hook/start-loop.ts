// `ralph hook start`: writes the loop file and creates its run directory.
import type { Criterion } from "../judge/criteria.js";
import { hookFiles } from "./hook-files.js";
import { createHookRun, hasEnded, newRunId, openHookRun, type HookClock } from "./hook-run.js";
import { readHookLoop, writeHookLoop, type HookLoop } from "./hook-loop-file.js";
import { withLoopLock } from "./loop-lock.js";

/** What to loop on. */
export interface HookStartRequest {
  prompt: string;
  /** 0 = unlimited. */
  maxIterations: number;
  completionPromise: string | null;
  criteria: Criterion[];
  /** The session to bind to now (when started from inside a Claude Code session); null binds the first to stop. */
  sessionId: string | null;
}

/** The started loop, or why none was started (nothing was written then). */
export type StartOutcome =
  { ok: true; runId: string; loop: HookLoop; loopFile: string } | { ok: false; message: string };

/** Why a new loop cannot start in `projectDir` now, or null when it can. */
export function activeLoopProblem(projectDir: string, clock: HookClock): string | null {
  const files = hookFiles(projectDir);
  const read = readHookLoop(files.loop);
  if (read.kind === "missing") return null;
  if (read.kind === "corrupt")
    return `${read.message}; delete it (its run directory keeps the history) to start a new loop`;
  if (!read.loop.active) return null;
  const record = read.loop.runId ? openHookRun(projectDir, read.loop.runId, clock) : null;
  if (record && hasEnded(record)) return null;
  const { iteration, maxIterations, runId } = read.loop;
  return `an in-session loop is already active in this project (run ${runId ?? "unrecorded"}, iteration ${iteration}/${maxIterations || "unlimited"}); end it first with: ralph hook cancel`;
}

/** Starts a loop: `.claude/ralph-loop.local.md` (iteration 1) and `.ralph/runs/<id>/` in mode "hook". */
export async function startHookLoop(
  projectDir: string,
  request: HookStartRequest,
  clock: HookClock,
): Promise<StartOutcome> {
  const files = hookFiles(projectDir);
  const locked = await withLoopLock(files.lock, clock, 10_000, async (): Promise<StartOutcome> => {
    const problem = activeLoopProblem(projectDir, clock);
    if (problem) return { ok: false, message: problem };
    const now = clock.now();
    const runId = newRunId(projectDir, now);
    const loop: HookLoop = {
      active: true,
      iteration: 1,
      sessionId: request.sessionId ?? "",
      maxIterations: request.maxIterations,
      completionPromise: request.completionPromise,
      completionCriteria: request.criteria,
      startedAt: now.toISOString(),
      runId,
      prompt: request.prompt.endsWith("\n") ? request.prompt : `${request.prompt}\n`,
    };
    // The loop file first: should creating the run fail, the hook creates the run directory itself.
    writeHookLoop(files.loop, loop);
    createHookRun(projectDir, runId, loop, clock);
    return { ok: true, runId, loop: loop, loopFile: files.loop };
  });
  return locked.ok
    ? locked.value
    : { ok: false, message: `the loop file is busy (pid ${locked.holder?.pid ?? "?"} holds ${files.lock}); try again` };
}
