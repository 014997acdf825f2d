// `ralph clean RUN... [--ended] [--force]`: removes ended runs' worktrees (a parent's with its children's), keeping their branches.
import { existsSync } from "node:fs";
import { parseRunId } from "../../util/parse-value.js";
import { isRunnerAlive } from "../../control/runner-alive.js";
import { listRuns, runIds, summariseRun } from "../../control/list-runs.js";
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

/** One run to clean: named by the person, or found (a parent's child, an ended run) and skipped when it has no worktree. */
interface Target {
  id: string;
  named: boolean;
}

/**
 * Cleans the worktrees of RUN... (a parent's with its children's) and, with `--ended`, of every ended run.
 * Exit 0 when all were removed, 2 when one was refused or is unknown, 1 when git failed.
 */
export async function cleanCommand(
  projectDir: string,
  given: readonly string[],
  force: boolean,
  ended = false,
): Promise<number> {
  if (given.length === 0 && !ended)
    throw new UsageError("clean: name the runs whose worktrees to remove (RUN...), or give --ended");
  const known = runIds(projectDir);
  for (const name of given) {
    const id = parseRunId(name);
    if (!id.ok) throw new UsageError(`RUN ${name}: expected ${id.expected}`);
    if (!known.includes(name) && !(await hasWorktree(projectDir, name)))
      throw new UsageError(
        `RUN ${name}: no such run in .ralph/runs and no worktree of that name (see ralph list, ralph doctor)`,
      );
  }
  const runs = known.length > 0 ? listRuns(projectDir, isRunnerAlive, new Date()) : [];
  const targets: Target[] = [];
  const add = (id: string, named: boolean) => {
    if (!targets.some((target) => target.id === id)) targets.push({ id, named });
  };
  for (const name of given) {
    add(name, true);
    for (const child of runs.filter((run) => run.parent === name)) add(child.id, false);
  }
  if (ended) for (const run of runs.filter((candidate) => !candidate.active)) add(run.id, false);
  let code = 0;
  let cleanedAny = false;
  for (const target of targets) {
    if (!target.named && !(await hasWorktree(projectDir, target.id))) continue;
    const live =
      known.includes(target.id) && summariseRun(projectDir, target.id, isRunnerAlive, new Date()).summary.active;
    const cleaned = await cleanWorktree(projectDir, target.id, { force, live });
    if (cleaned.ok) {
      cleanedAny = true;
      process.stdout.write(`${renderCleaned(target.id, cleaned)}\n`);
      continue;
    }
    const gitFailed = cleaned.failure.kind === "git-failed";
    // One run named: its refusal is the command's usage error, as ever.
    if (targets.length === 1 && !gitFailed) throw new UsageError(renderWorktreeFailure(cleaned.failure));
    process.stderr.write(`ralph: ${renderWorktreeFailure(cleaned.failure)}\n`);
    code = gitFailed ? Math.max(code, 1) : 2;
  }
  if (!cleanedAny && code === 0) process.stdout.write("no ended run has a worktree to remove\n");
  return code;
}
