// After each sandboxed iteration: what the agent planted in the work tree that the person's git would run
// or follow later, outside the sandbox, which the walls cannot forbid in advance (the work tree is the
// agent's to write): a nested repository (a `.git` directory or file below the top, whose config can name
// an fsmonitor or hooks), a new gitlink in the index (git status enters it), and `.git/commondir` (it
// points git at another directory's config and hooks; git refuses an empty one, so no placeholder can be
// bound over it). Each is undone before anything else runs git: a nested `.git` is moved into the run's
// quarantine directory, a gitlink leaves the index, `commondir` is moved away too.
import { spawnSync } from "node:child_process";
import { existsSync, lstatSync, mkdirSync, readdirSync, renameSync } from "node:fs";
import { join, relative } from "node:path";

/** Directories never walked: the repository itself, ralph's own, and installed packages. */
const SKIP = new Set([".git", ".ralph", "node_modules"]);
/** git with nothing of the repository's own configuration that runs code. */
const SAFE_GIT = ["-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null", "-c", "submodule.recurse=false"];

/** Every `.git` (directory or file) below the top of `workDir`, relative to it. */
function nestedRepositories(workDir: string): string[] {
  const found: string[] = [];
  const walk = (dir: string): void => {
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      const path = join(dir, entry.name);
      if (entry.name === ".git" && dir !== workDir) found.push(relative(workDir, path));
      else if (entry.isDirectory() && !(dir === workDir && SKIP.has(entry.name)) && entry.name !== "node_modules") walk(path);
    }
  };
  walk(workDir);
  return found.sort();
}

/** The index's gitlinks (mode 160000), by path. */
function gitlinks(workDir: string): string[] {
  const listed = spawnSync("git", [...SAFE_GIT, "ls-files", "-s", "-z"], { cwd: workDir, encoding: "utf8", timeout: 30_000 });
  if (listed.status !== 0) return [];
  return listed.stdout
    .split("\0")
    .filter((line) => line.startsWith("160000 "))
    .map((line) => line.slice(line.indexOf("\t") + 1))
    .sort();
}

/** Whether `workDir` has its own `.git` directory (a worktree's `.git` file points outside, read-only inside). */
function ownGitDir(workDir: string): string | null {
  const dotGit = join(workDir, ".git");
  try {
    return lstatSync(dotGit).isDirectory() ? dotGit : null;
  } catch {
    return null;
  }
}

/** Moves `path` into `quarantine` under a name saying where it was. */
function quarantine(path: string, name: string, dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  renameSync(path, join(dir, `${Date.now()}-${name.replace(/[/\\]/g, "_")}`));
}

/**
 * Starts watching `workDir`; the returned function (called once the agent's tree has ended) says what was
 * planted since, relative to the work tree, and undoes it (planted repositories go to `quarantineDir`).
 */
export function watchTamper(workDir: string, quarantineDir: string): () => string[] {
  const gitDir = ownGitDir(workDir);
  const before = { nested: new Set(nestedRepositories(workDir)), links: new Set(gitDir === null ? [] : gitlinks(workDir)), commondir: gitDir !== null && existsSync(join(gitDir, "commondir")) };
  return () => {
    const planted: string[] = [];
    if (gitDir !== null && !before.commondir && existsSync(join(gitDir, "commondir"))) {
      planted.push(".git/commondir");
      quarantine(join(gitDir, "commondir"), ".git/commondir", quarantineDir);
    }
    for (const path of nestedRepositories(workDir).filter((path) => !before.nested.has(path))) {
      planted.push(path);
      quarantine(join(workDir, path), path, quarantineDir);
    }
    if (gitDir !== null) {
      const added = gitlinks(workDir).filter((path) => !before.links.has(path));
      if (added.length > 0) spawnSync("git", [...SAFE_GIT, "rm", "-q", "--cached", "--", ...added], { cwd: workDir, timeout: 30_000 });
      for (const path of added) planted.push(`${path} (a gitlink in the index)`);
    }
    return planted;
  };
}
