// Worktrees under `.ralph/worktrees` that no run accounts for: listed by `ralph doctor`, never deleted.
import { readdirSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { listRecordedWorktrees } from "./list-worktrees.js";
import { realPath, worktreesDir } from "./worktree-location.js";

/** Why a worktree is an orphan. */
export type OrphanProblem = "run-gone" | "directory-gone" | "unknown-to-git";

/** One orphaned worktree: the run id it is named after, its path, its branch, and what is wrong. */
export interface OrphanWorktree {
  id: string;
  path: string;
  branch: string | null;
  problem: OrphanProblem;
}

/**
 * The worktrees under `.ralph/worktrees` whose run directory is gone (not one of `runIds`), whose
 * directory is gone while git still records it, or which git does not know as a worktree.
 */
export async function findOrphanWorktrees(projectDir: string, runIds: readonly string[]): Promise<OrphanWorktree[]> {
  const home = realPath(worktreesDir(projectDir));
  const recorded = (await listRecordedWorktrees(projectDir)).filter(
    (worktree) => realPath(dirname(worktree.path)) === home,
  );
  let present: string[] = [];
  try {
    present = readdirSync(home, { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name);
  } catch {
    // No worktrees directory: only records can be left.
  }
  const runs = new Set(runIds);
  const orphans: OrphanWorktree[] = [];
  const ids = new Set([...present, ...recorded.map((worktree) => basename(worktree.path))]);
  for (const id of [...ids].sort()) {
    const record = recorded.find((worktree) => basename(worktree.path) === id);
    const path = join(worktreesDir(projectDir), id);
    const problem: OrphanProblem | null = !present.includes(id)
      ? "directory-gone"
      : !record
        ? "unknown-to-git"
        : !runs.has(id)
          ? "run-gone"
          : null;
    if (problem) orphans.push({ id, path, branch: record?.branch ?? null, problem });
  }
  return orphans;
}
