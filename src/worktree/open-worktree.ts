// Creates a run's worktree on a new branch from HEAD, or finds it again for `ralph continue`.
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { failed, gitFailed, type WorktreeOutcome } from "./worktree-failure.js";
import { branchExists, currentBranch, placeInRepository, realPath, repositoryOf, worktreeBranch, worktreePath, worktreesDir } from "./worktree-location.js";
import { runGit } from "./run-git.js";

/** A run's worktree: its directory, its branch, and the directory the run works in (the project's place in it). */
export interface RunWorktree {
  path: string;
  branch: string;
  cwd: string;
}

/**
 * Adds `.ralph/worktrees/<id>` on a new branch `ralph/<id>` at the commit HEAD names now. Only the
 * repository's refs and worktree records change: the person's checkout, index and branch stay as they are,
 * whether HEAD is a branch or detached and whatever is uncommitted.
 */
export async function createWorktree(projectDir: string, runId: string): Promise<WorktreeOutcome<RunWorktree & { base: string }>> {
  const repo = await repositoryOf(projectDir);
  if ("error" in repo) return failed({ kind: "not-a-repo", dir: projectDir, detail: repo.error });
  const head = await runGit(projectDir, ["rev-parse", "--verify", "-q", "HEAD^{commit}"]);
  if (!head.ok) return failed({ kind: "no-commit", top: repo.top });
  const base = head.stdout.trim();
  const path = worktreePath(projectDir, runId);
  const branch = worktreeBranch(runId);
  if (existsSync(path)) return failed({ kind: "path-exists", path });
  // A run id may hold what a ref may not (`a..b`, `x.lock`): ask git rather than guess its rules.
  if (!(await runGit(projectDir, ["check-ref-format", `refs/heads/${branch}`])).ok) return failed({ kind: "bad-branch-name", branch });
  if (await branchExists(projectDir, branch)) return failed({ kind: "branch-exists", branch });
  mkdirSync(worktreesDir(projectDir), { recursive: true, mode: 0o700 });
  const args = ["worktree", "add", "--quiet", "-b", branch, path, base];
  const added = await runGit(projectDir, args);
  if (!added.ok) return gitFailed(args, added.stderr);
  return { ok: true, path, branch, base, cwd: join(path, placeInRepository(repo.top, projectDir)) };
}

/** Finds run `runId`'s worktree again: it must still exist, belong to this repository and be on `ralph/<id>`. */
export async function reuseWorktree(projectDir: string, runId: string): Promise<WorktreeOutcome<RunWorktree>> {
  const path = worktreePath(projectDir, runId);
  const branch = worktreeBranch(runId);
  if (!existsSync(path)) return failed({ kind: "worktree-gone", path, branch, branchKept: await branchExists(projectDir, branch) });
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
  if (own.top !== realPath(path)) return failed({ kind: "not-a-worktree", path, detail: `git sees it as part of ${own.top}` });
  if (own.commonDir !== repo.commonDir) return failed({ kind: "not-a-worktree", path, detail: `it belongs to the repository at ${own.commonDir}` });
  return { ok: true, top: repo.top };
}
