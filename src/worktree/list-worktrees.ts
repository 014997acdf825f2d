// The worktrees git has on record for a repository, from `git worktree list --porcelain`.
import { runGit } from "./run-git.js";

/** One worktree git knows: its path, its branch (null when detached) and whether its directory is gone. */
export interface RecordedWorktree {
  path: string;
  branch: string | null;
  prunable: boolean;
}

/** Every worktree recorded in the repository around `dir`; empty outside a repository. */
export async function listRecordedWorktrees(dir: string): Promise<RecordedWorktree[]> {
  const listed = await runGit(dir, ["worktree", "list", "--porcelain", "-z"]);
  if (!listed.ok) return [];
  const worktrees: RecordedWorktree[] = [];
  for (const field of listed.stdout.split("\0")) {
    const [key, ...rest] = field.split(" ");
    const value = rest.join(" ");
    if (key === "worktree") worktrees.push({ path: value, branch: null, prunable: false });
    const current = worktrees.at(-1);
    if (!current) continue;
    if (key === "branch") current.branch = value.replace(/^refs\/heads\//, "");
    if (key === "prunable") current.prunable = true;
  }
  return worktrees;
}
