// The git steps of a merge into an integration worktree: start it, see what conflicts, stage, conclude or
// abandon it so that nothing of it is left (no conflict markers, no MERGE_HEAD, no stray files).
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { EVERYTHING_BUT_RALPH } from "./worktree-location.js";
import { runGit } from "./run-git.js";

/** A git step's outcome: a value or a one-line reason. */
export type GitStep<T> = ({ ok: true } & T) | { ok: false; message: string };

// ralph's own commits: no hooks, no signing, the author only from config.
const COMMIT = ["-c", "user.useConfigOnly=true", "-c", "commit.gpgSign=false"];

/** The commit HEAD names in `dir`. */
export async function headOf(dir: string): Promise<GitStep<{ commit: string }>> {
  const head = await runGit(dir, ["rev-parse", "--verify", "-q", "HEAD^{commit}"]);
  return head.ok
    ? { ok: true, commit: head.stdout.trim() }
    : { ok: false, message: `git rev-parse HEAD: ${head.stderr}` };
}

/** The text of `path` (relative to the top) at `commit`. */
export async function fileAt(dir: string, commit: string, path: string): Promise<GitStep<{ text: string }>> {
  const shown = await runGit(dir, ["show", `${commit}:${path}`]);
  return shown.ok
    ? { ok: true, text: shown.stdout }
    : { ok: false, message: `git show ${commit}:${path}: ${shown.stderr}` };
}

/** Starts merging `branch` without committing; `conflicts` lists the unmerged paths (empty for a clean merge). */
export async function startMerge(dir: string, branch: string): Promise<GitStep<{ conflicts: string[] }>> {
  const merged = await runGit(dir, [...COMMIT, "merge", "--no-ff", "--no-commit", "--quiet", `refs/heads/${branch}`]);
  const conflicts = await unmergedPaths(dir);
  if (!conflicts.ok) return conflicts;
  if (!merged.ok && conflicts.paths.length === 0)
    return { ok: false, message: `git merge ${branch}: ${merged.stderr}` };
  return { ok: true, conflicts: conflicts.paths };
}

/** The paths git still holds as unmerged. */
export async function unmergedPaths(dir: string): Promise<GitStep<{ paths: string[] }>> {
  const listed = await runGit(dir, ["diff", "--name-only", "--diff-filter=U", "-z"]);
  if (!listed.ok) return { ok: false, message: `git diff --diff-filter=U: ${listed.stderr}` };
  return { ok: true, paths: [...new Set(listed.stdout.split("\0").filter((path) => path !== ""))] };
}

/** True when the file at `path` (from the top of `top`) still holds a conflict marker line. */
export function hasConflictMarkers(top: string, path: string): boolean {
  let text: string;
  try {
    text = readFileSync(join(top, path), "utf8");
  } catch {
    return false; // deleted: staging records the deletion
  }
  return /^(<{7}|={7}|>{7})(\s|$)/m.test(text);
}

/** Stages every change in the work tree (outside `.ralph`), except `paths` (unstaged conflicts stay unmerged). */
export async function stageAllBut(dir: string, paths: readonly string[]): Promise<GitStep<object>> {
  const added = await runGit(dir, [
    "add",
    "--all",
    "--",
    ...EVERYTHING_BUT_RALPH,
    ...paths.map((path) => `:(top,literal,exclude)${path}`),
  ]);
  return added.ok ? { ok: true } : { ok: false, message: `git add: ${added.stderr}` };
}

/** Writes `text` to `path` (from the top of `top`) and stages it. */
export async function writeAndStage(top: string, path: string, text: string): Promise<GitStep<object>> {
  try {
    writeFileSync(join(top, path), text);
  } catch (error) {
    return { ok: false, message: `cannot write ${path}: ${(error as Error).message}` };
  }
  const added = await runGit(top, ["add", "--", `:(top,literal)${path}`]);
  return added.ok ? { ok: true } : { ok: false, message: `git add ${path}: ${added.stderr}` };
}

/** Commits what is staged (concluding a merge in progress) with `message`; returns the new HEAD. */
export async function commitStaged(dir: string, message: string): Promise<GitStep<{ commit: string }>> {
  const committed = await runGit(dir, [...COMMIT, "commit", "--no-verify", "--allow-empty", "--quiet", "-m", message]);
  if (!committed.ok) return { ok: false, message: `git commit: ${committed.stderr}` };
  return headOf(dir);
}

/**
 * Puts the worktree back at `commit` with nothing left over: a merge in progress aborted, the index and
 * files reset, files git does not track removed (ralph's own `.ralph` directories excepted).
 */
export async function resetTo(dir: string, commit: string): Promise<GitStep<object>> {
  await runGit(dir, ["merge", "--abort"]); // fails harmlessly when no merge is in progress
  for (const args of [
    ["reset", "--quiet", "--hard", commit],
    ["clean", "-fdq", "--", ...EVERYTHING_BUT_RALPH],
  ]) {
    const done = await runGit(dir, args);
    if (!done.ok) return { ok: false, message: `git ${args.slice(0, 2).join(" ")}: ${done.stderr}` };
  }
  return { ok: true };
}
