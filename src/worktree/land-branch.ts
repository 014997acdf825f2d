// The git steps of `ralph land`: is the person's checkout clean, merge a run's branch into it (or nothing
// at all), push a run's branch to a remote. Repository hooks never run: the agent could have written them.
import { EVERYTHING_BUT_RALPH } from "./worktree-location.js";
import { runGit } from "./run-git.js";
import type { GitStep } from "./integration-git.js";

const NO_HOOKS = ["-c", "core.hooksPath=/dev/null"];

/** The tracked changes (staged or not) in the checkout at `dir`, as porcelain lines; ralph's own files aside. */
export async function trackedChanges(dir: string): Promise<GitStep<{ changes: string[] }>> {
  const status = await runGit(dir, ["status", "--porcelain=v1", "--untracked-files=no", "--", ...EVERYTHING_BUT_RALPH]);
  if (!status.ok) return { ok: false, message: `git status: ${status.stderr}` };
  return { ok: true, changes: status.stdout.split("\n").filter((line) => line !== "") };
}

/**
 * Merges `branch` into the branch checked out at `dir` with a merge commit. A merge that conflicts (or fails
 * otherwise) is aborted: the checkout is left exactly as it was, and the conflicted paths are named.
 */
export async function mergeIntoCheckout(dir: string, branch: string, message: string): Promise<GitStep<{ commit: string }> | { ok: false; message: string; conflicts: string[] }> {
  const merged = await runGit(dir, [...NO_HOOKS, "merge", "--no-ff", "--no-edit", "--quiet", "-m", message, `refs/heads/${branch}`]);
  if (!merged.ok) {
    const unmerged = await runGit(dir, ["diff", "--name-only", "--diff-filter=U", "-z"]);
    const conflicts = unmerged.ok ? [...new Set(unmerged.stdout.split("\0").filter((path) => path !== ""))] : [];
    if ((await runGit(dir, ["rev-parse", "-q", "--verify", "MERGE_HEAD"])).ok) await runGit(dir, [...NO_HOOKS, "merge", "--abort"]);
    return { ok: false, message: merged.stderr.split("\n")[0] ?? "git merge failed", conflicts };
  }
  const head = await runGit(dir, ["rev-parse", "HEAD"]);
  return head.ok ? { ok: true, commit: head.stdout.trim() } : { ok: false, message: head.stderr };
}

/** Pushes local `branch` to `remote` as branch `destination` (never forced). */
export async function pushBranch(dir: string, remote: string, branch: string, destination: string): Promise<GitStep<object>> {
  const pushed = await runGit(dir, [...NO_HOOKS, "push", "--quiet", remote, `refs/heads/${branch}:refs/heads/${destination}`]);
  return pushed.ok ? { ok: true } : { ok: false, message: `git push ${remote}: ${pushed.stderr.split("\n").slice(-1)[0] ?? "failed"}` };
}
