// Where a run's worktree lives and which branch it is on, and what git says about a repository.
import { realpathSync } from "node:fs";
import { join, relative, resolve, sep } from "node:path";
import { runGit } from "./run-git.js";

/** Pathspecs for everything in a worktree except any `.ralph` directory, at the top or deeper, ignored or not. */
export const EVERYTHING_BUT_RALPH = [":(top)", ":(top,glob,exclude)**/.ralph/**"];

/** The directory holding every run worktree of a project. */
export function worktreesDir(projectDir: string): string {
  return join(projectDir, ".ralph", "worktrees");
}

/** The worktree of run `runId`: `.ralph/worktrees/<id>` under the project. */
export function worktreePath(projectDir: string, runId: string): string {
  return join(worktreesDir(projectDir), runId);
}

/** The branch a run's worktree is on: `ralph/<id>`. */
export function worktreeBranch(runId: string): string {
  return `ralph/${runId}`;
}

/** The repository around `dir`: its top directory and its shared git directory, both real paths, or git's reason there is none. */
export async function repositoryOf(dir: string): Promise<{ top: string; commonDir: string } | { error: string }> {
  const found = await runGit(dir, ["rev-parse", "--show-toplevel", "--git-common-dir"]);
  if (!found.ok) return { error: found.code === "ENOENT" ? "git is not installed (not found on PATH)" : found.stderr };
  const [top, common] = found.stdout.split("\n");
  if (!top || !common) return { error: "not inside a work tree" };
  return { top: realPath(top), commonDir: realPath(resolve(dir, common)) };
}

/** The path of `dir` inside its repository (`""` at the top), to find the same place in a worktree. */
export function placeInRepository(top: string, dir: string): string {
  const inside = relative(top, realPath(dir));
  return inside === "" || inside.startsWith("..") || inside.startsWith(sep) ? "" : inside;
}

/** `path` with links resolved, or as given when it does not exist. */
export function realPath(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return resolve(path);
  }
}

/** The branch checked out in `dir` (`ralph/x`), or null for a detached HEAD. */
export async function currentBranch(dir: string): Promise<string | null> {
  const head = await runGit(dir, ["symbolic-ref", "-q", "HEAD"]);
  return head.ok ? head.stdout.trim().replace(/^refs\/heads\//, "") : null;
}

/** True when `refs/heads/<branch>` exists in the repository around `dir`. */
export async function branchExists(dir: string, branch: string): Promise<boolean> {
  return (await runGit(dir, ["rev-parse", "--verify", "-q", `refs/heads/${branch}`])).ok;
}
