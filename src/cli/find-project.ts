// Finds the project a command is about, as git finds its repository: walking up from the current directory.
import { existsSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/**
 * The nearest directory at or above `start` holding a `.ralph/` directory; failing that, the nearest git
 * root (a `.git` directory or file); failing both, `start` itself.
 */
export function findProject(start: string): string {
  const from = resolve(start);
  let gitRoot: string | null = null;
  for (let dir = from; ; dir = dirname(dir)) {
    if (isDirectory(join(dir, ".ralph"))) return dir;
    if (gitRoot === null && existsSync(join(dir, ".git"))) gitRoot = dir;
    if (dirname(dir) === dir) return gitRoot ?? from;
  }
}
