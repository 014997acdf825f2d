// Creates a run's worktree on a new branch from HEAD, or finds it again for `ralph continue`.
import { closeSync, existsSync, mkdirSync, openSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { failed, gitFailed, type WorktreeOutcome } from "./worktree-failure.js";
import {
  branchExists,
  currentBranch,
  placeInRepository,
  realPath,
  repositoryOf,
  worktreeBranch,
  worktreePath,
  worktreesDir,
} from "./worktree-location.js";
import { runGit } from "./run-git.js";

/** A run's worktree: its directory, its branch, and the directory the run works in (the project's place in it). */
export interface RunWorktree {
  path: string;
  branch: string;
  cwd: string;
}

/** A lock older than this was left by a process that died while adding. */
const STALE_LOCK_MS = 30_000;

/** Runs `work` while holding the exclusive lock file `lock` (waiting for it, taking over a stale one). */
async function oneAtATime<T>(lock: string, work: () => Promise<T>): Promise<T> {
  for (let waited = 0; ; waited++) {
    try {
      closeSync(openSync(lock, "wx", 0o600));
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      try {
        if (Date.now() - statSync(lock).mtimeMs > STALE_LOCK_MS) rmSync(lock, { force: true });
      } catch {
        // released meanwhile
      }
      await new Promise((resolve) => setTimeout(resolve, Math.min(10 + waited * 5, 100)));
    }
  }
  try {
    return await work();
  } finally {
    rmSync(lock, { force: true });
  }
}

/**
 * Adds `.ralph/worktrees/<id>` on a new branch `ralph/<id>` at the commit HEAD (or `from`) names now. Only
 * the repository's refs and worktree records change: the person's checkout, index and branch stay as they
 * are, whether HEAD is a branch or detached and whatever is uncommitted. With `reuseBranch` (a run named
 * after its task, as `--task-index` runs are), an existing `ralph/<id>` is checked out instead of refused,
 * so a replacement for a run that ended elsewhere goes on from its branch; `reused` says which happened.
 */
export async function createWorktree(
  projectDir: string,
  runId: string,
  from = "HEAD",
  options: { reuseBranch?: boolean } = {},
): Promise<WorktreeOutcome<RunWorktree & { base: string; reused: boolean; start: string }>> {
  const repo = await repositoryOf(projectDir);
  if ("error" in repo) return failed({ kind: "not-a-repo", dir: projectDir, detail: repo.error });
  const head = await runGit(projectDir, ["rev-parse", "--verify", "-q", `${from}^{commit}`]);
  if (!head.ok) return failed({ kind: "no-commit", top: repo.top });
  const startCommit = head.stdout.trim();
  const path = worktreePath(projectDir, runId);
  const branch = worktreeBranch(runId);
  if (existsSync(path)) return failed({ kind: "path-exists", path });
  // A run id may hold what a ref may not (`a..b`, `x.lock`): ask git rather than guess its rules.
  if (!(await runGit(projectDir, ["check-ref-format", `refs/heads/${branch}`])).ok)
    return failed({ kind: "bad-branch-name", branch });
  const reused = await branchExists(projectDir, branch);
  if (reused && !options.reuseBranch) return failed({ kind: "branch-exists", branch });
  // A reused branch's work since it left the branch the run starts from has never been reviewed: its base is
  // that fork point, so the review's diff and the report cover all of it.
  const fork = reused ? await runGit(projectDir, ["merge-base", `refs/heads/${branch}`, startCommit]) : null;
  const base = fork?.ok ? fork.stdout.trim() : startCommit;
  mkdirSync(worktreesDir(projectDir), { recursive: true, mode: 0o700 });
  const args = reused
    ? ["worktree", "add", "--quiet", path, branch]
    : ["worktree", "add", "--quiet", "-b", branch, path, startCommit];
  // Two runs adding worktrees to one repository at the same moment make git fail reading the other's
  // half-written record ("failed to read .git/worktrees/…/commondir"), after it made the branch: one at a time.
  const added = await oneAtATime(join(worktreesDir(projectDir), ".add.lock"), () => runGit(projectDir, args));
  if (!added.ok) return gitFailed(args, added.stderr);
  return {
    ok: true,
    path,
    branch,
    base,
    reused,
    start: startCommit,
    cwd: join(path, placeInRepository(repo.top, projectDir)),
  };
}

/** Finds run `runId`'s worktree again: it must still exist, belong to this repository and be on `ralph/<id>`. */
export async function reuseWorktree(projectDir: string, runId: string): Promise<WorktreeOutcome<RunWorktree>> {
  const path = worktreePath(projectDir, runId);
  const branch = worktreeBranch(runId);
  if (!existsSync(path))
    return failed({ kind: "worktree-gone", path, branch, branchKept: await branchExists(projectDir, branch) });
  const checked = await checkWorktree(projectDir, path);
  if (!checked.ok) return checked;
  const actual = await currentBranch(path);
  if (actual !== branch) return failed({ kind: "wrong-branch", path, expected: branch, actual });
  return { ok: true, path, branch, cwd: join(path, placeInRepository(checked.top, projectDir)) };
}

/** Whether `path` is a worktree of its own (not a plain directory) of the repository around `projectDir`. */
export async function checkWorktree(projectDir: string, path: string): Promise<WorktreeOutcome<{ top: string }>> {
  const repo = await repositoryOf(projectDir);
  if ("error" in repo) return failed({ kind: "not-a-repo", dir: projectDir, detail: repo.error });
  const own = await repositoryOf(path);
  if ("error" in own) return failed({ kind: "not-a-worktree", path, detail: own.error });
  // A plain directory inside the checkout answers with the checkout's own top: git no longer knows the worktree.
  if (own.top !== realPath(path))
    return failed({ kind: "not-a-worktree", path, detail: `git sees it as part of ${own.top}` });
  if (own.commonDir !== repo.commonDir)
    return failed({ kind: "not-a-worktree", path, detail: `it belongs to the repository at ${own.commonDir}` });
  return { ok: true, top: repo.top };
}

/** Undoes createWorktree for a run that could not start: the worktree, and its branch unless it was there before. */
export async function removeNewWorktree(projectDir: string, created: RunWorktree, keepBranch = false): Promise<void> {
  await runGit(projectDir, ["worktree", "remove", "--force", created.path]);
  if (!keepBranch) await runGit(projectDir, ["branch", "-D", created.branch]);
}
