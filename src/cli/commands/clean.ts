// `ralph clean RUN [--force]`: removes an ended run's worktree and keeps its branch.
import { existsSync } from "node:fs";
import { parseRunId } from "../../util/parse-value.js";
import { isRunnerAlive } from "../../control/runner-alive.js";
import { runIds, summariseRun } from "../../control/list-runs.js";
import { cleanWorktree } from "../../worktree/clean-worktree.js";
import { listRecordedWorktrees } from "../../worktree/list-worktrees.js";
import { realPath, worktreePath } from "../../worktree/worktree-location.js";
import { renderCleaned, renderWorktreeFailure } from "../render-worktree.js";
import { UsageError } from "../usage-error.js";

/** Whether `runId` names a worktree even though its run directory is gone (an orphan doctor lists). */
async function hasWorktree(projectDir: string, runId: string): Promise<boolean> {
  const path = worktreePath(projectDir, runId);
  if (existsSync(path)) return true;
  return (await listRecordedWorktrees(projectDir)).some((worktree) => realPath(worktree.path) === realPath(path));
}

/** Cleans RUN's worktree; exit 0 when removed, 2 when refused or nothing is there, 1 when git failed. */
export async function cleanCommand(projectDir: string, given: string, force: boolean): Promise<number> {
  const id = parseRunId(given);
  if (!id.ok) throw new UsageError(`RUN ${given}: expected ${id.expected}`);
  let live = false;
  if (runIds(projectDir).includes(given)) live = summariseRun(projectDir, given, isRunnerAlive, new Date()).summary.active;
  else if (!(await hasWorktree(projectDir, given))) throw new UsageError(`RUN ${given}: no such run in .ralph/runs and no worktree of that name (see ralph list, ralph doctor)`);
  const cleaned = await cleanWorktree(projectDir, given, { force, live });
  if (cleaned.ok) {
    process.stdout.write(`${renderCleaned(given, cleaned)}\n`);
    return 0;
  }
  if (cleaned.failure.kind !== "git-failed") throw new UsageError(renderWorktreeFailure(cleaned.failure));
  process.stderr.write(`ralph: ${renderWorktreeFailure(cleaned.failure)}\n`);
  return 1;
}
