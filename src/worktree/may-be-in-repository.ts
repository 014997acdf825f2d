// Whether git could find a repository from a directory, answered without starting git.
import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";

/**
 * False only when git could not find a repository from `cwd`: no `.git` in it or any directory above it, and
 * no GIT_DIR or GIT_WORK_TREE naming one. A directory that does not exist is left for git to report.
 */
export function mayBeInRepository(cwd: string, env: NodeJS.ProcessEnv): boolean {
  if (env.GIT_DIR || env.GIT_WORK_TREE) return true;
  let dir = resolve(cwd);
  if (!existsSync(dir)) return true;
  for (;;) {
    if (existsSync(join(dir, ".git"))) return true;
    const parent = dirname(dir);
    if (parent === dir) return false;
    dir = parent;
  }
}
