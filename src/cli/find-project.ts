// Finds the project a command is about, as git finds its repository: walking up from the current directory.
import { existsSync, statSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** The project whose `.ralph/worktrees/<id>` `dir` is (one of ralph's own worktrees), or null. */
function ownerOfWorktree(dir: string): string | null {
  const worktrees = dirname(dir);
  const ralph = dirname(worktrees);
  return basename(worktrees) === "worktrees" && basename(ralph) === ".ralph" ? dirname(ralph) : null;
}

/**
 * The nearest directory at or above `start` holding a `.ralph/` directory or a `.git` (directory or file);
 * failing both, `start` itself. A `.ralph/` above the nearest repository root is never used: a repository
 * nested in a directory that has run ralph is a project of its own. One of ralph's own worktrees
 * (`.ralph/worktrees/<id>`) belongs to the project that made it.
 */
export function findProject(start: string): string {
  const from = resolve(start);
  for (let dir = from; ; dir = dirname(dir)) {
    if (isDirectory(join(dir, ".ralph"))) return dir;
    if (existsSync(join(dir, ".git"))) return ownerOfWorktree(dir) ?? dir;
    if (dirname(dir) === dir) return from;
  }
}
