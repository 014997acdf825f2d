// `ralph hook start`: writes the loop's state file and creates its run directory.
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
export type StartOutcome = { ok: true; runId: string; state: HookLoop; stateFile: string } | { ok: false; message: string };

/** Why a new loop cannot start in `projectDir` now, or null when it can. */
export function activeLoopProblem(projectDir: string, clock: HookClock): string | null {
  const files = hookFiles(projectDir);
  const read = readHookLoop(files.state);
  if (read.kind === "missing") return null;
  if (read.kind === "corrupt") return `${read.message}; delete it (its run directory keeps the history) to start a new loop`;
  if (!read.state.active) return null;
  const record = read.state.runId ? openHookRun(projectDir, read.state.runId, clock) : null;
  if (record && hasEnded(record)) return null;
  const { iteration, maxIterations, runId } = read.state;
  return `an in-session loop is already active in this project (run ${runId ?? "unrecorded"}, iteration ${iteration}/${maxIterations || "unlimited"}); end it first with: ralph hook cancel`;
}

/** Starts a loop: `.claude/ralph-loop.local.md` (iteration 1) and `.ralph/runs/<id>/` in mode "hook". */
export async function startHookLoop(projectDir: string, request: HookStartRequest, clock: HookClock): Promise<StartOutcome> {
  const files = hookFiles(projectDir);
  const locked = await withLoopLock(files.lock, clock, 10_000, async (): Promise<StartOutcome> => {
    const problem = activeLoopProblem(projectDir, clock);
    if (problem) return { ok: false, message: problem };
    const now = clock.now();
    const runId = newRunId(projectDir, now);
    const state: HookLoop = {
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
    // The state file first: should creating the run fail, the hook creates the run directory itself.
    writeHookLoop(files.state, state);
    createHookRun(projectDir, runId, state, clock);
    return { ok: true, runId, state, stateFile: files.state };
  });
  return locked.ok ? locked.value : { ok: false, message: `the loop's state is busy (pid ${locked.holder?.pid ?? "?"} holds ${files.lock}); try again` };
}
