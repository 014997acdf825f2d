// What a sandboxed agent (or a check running its code) planted in the work tree that the person's git would
// run or follow later, outside the sandbox, which the walls cannot forbid in advance (the work tree is the
// agent's to write): a nested repository (a `.git` directory or file below the top, whose config can name an
// fsmonitor or hooks), a directory shaped as a repository itself (HEAD with objects/ and refs/, or a
// commondir: git run inside it takes its config, `core.worktree` and all, with no `.git` anywhere), a new
// gitlink in the index (git status enters it), and `.git/commondir` (it points git at another directory's
// config and hooks; git refuses an empty one, so no placeholder can be bound over it). The baseline is taken
// once, when the run starts: whatever appears later is planted, whichever iteration or check made it. Each
// scan undoes what it finds before anything else runs git: a nested repository is moved into the run's
// quarantine directory, a gitlink leaves the index, `commondir` is moved away too. The same goes for files
// an agent CLI would read as its config once they appear in its writable state (see agent-state.ts).
import { mkdirSync, renameSync } from "node:fs";
import { readdir } from "node:fs/promises";
import { join, relative } from "node:path";
import { entryKind } from "../store/regular-file.js";
import { runGit } from "../worktree/run-git.js";

/** Directories of the top never walked: the repository itself and ralph's own. */
const SKIP = new Set([".git", ".ralph"]);

/** Whether the entries of a directory make git take it for a repository of its own (see git's is_git_directory). */
function repositoryShaped(names: ReadonlySet<string>): boolean {
  return names.has("HEAD") && ((names.has("objects") && names.has("refs")) || names.has("commondir"));
}

/**
 * Every nested repository below the top of `workDir`, relative to it: each `.git` (directory or file), and
 * each directory shaped as a repository. Installed packages are walked too (a `node_modules/x/.git` is a
 * repository like any other); the walk reads directories concurrently, never blocking the event loop.
 */
async function nestedRepositories(workDir: string): Promise<string[]> {
  const found: string[] = [];
  const walk = async (dir: string): Promise<void> => {
    let entries;
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch {
      return;
    }
    const top = dir === workDir;
    if (!top && repositoryShaped(new Set(entries.map((entry) => entry.name)))) {
      found.push(relative(workDir, dir));
      return;
    }
    const below: Array<Promise<void>> = [];
    for (const entry of entries) {
      const path = join(dir, entry.name);
      if (entry.name === ".git" && !top) found.push(relative(workDir, path));
      else if (entry.isDirectory() && !(top && SKIP.has(entry.name))) below.push(walk(path));
    }
    await Promise.all(below);
  };
  await walk(workDir);
  return found.sort();
}

/** The index's gitlinks (mode 160000), by path. */
async function gitlinks(workDir: string, env: NodeJS.ProcessEnv): Promise<string[]> {
  const listed = await runGit(workDir, ["ls-files", "-s", "-z"], env, { noOptionalLocks: true, timeoutMs: 30_000 });
  if (!listed.ok)
    throw new Error(
      `the tamper scan could not list the index's gitlinks (git ls-files: ${listed.stderr.trim() || listed.code})`,
    );
  return listed.stdout
    .split("\0")
    .filter((line) => line.startsWith("160000 "))
    .map((line) => line.slice(line.indexOf("\t") + 1))
    .sort();
}

let quarantined = 0;

/** Moves `path` into `quarantine` under a name saying where it was (numbered: `a/b/.git` and `a_b/.git` both fit). */
function quarantine(path: string, name: string, dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  quarantined += 1;
  renameSync(path, join(dir, `${Date.now()}-${quarantined}-${name.replace(/[/\\]/g, "_")}`));
}

/** Says what was planted since the baseline, relative to the work tree, and undoes it. */
export type TamperScan = () => Promise<string[]>;

/**
 * Takes the baseline of `workDir` (once, at the run's start) and returns the scan to run after each agent
 * and after each round of checks, before anything commits: planted repositories go to `quarantineDir`.
 * `outside`: absolute paths in the agent CLIs' writable state that must not appear (named as they are).
 * `env` is the run's; its git runs with ralph's inert settings, never pointed at another repository.
 */
export async function watchTamper(
  workDir: string,
  quarantineDir: string,
  env: NodeJS.ProcessEnv,
  outside: readonly string[] = [],
): Promise<TamperScan> {
  // A worktree's `.git` is a file naming a directory outside it, read-only inside: only an own one is watched.
  const gitDir = entryKind(join(workDir, ".git")) === "directory" ? join(workDir, ".git") : null;
  const before = {
    nested: new Set(await nestedRepositories(workDir)),
    links: new Set(gitDir === null ? [] : await gitlinks(workDir, env).catch(() => [])),
    commondir: gitDir !== null && entryKind(join(gitDir, "commondir")) !== "missing",
    outside: new Set(outside.filter((path) => entryKind(path) !== "missing")),
  };
  return async () => {
    const planted: string[] = [];
    // A link counts, even one that leads nowhere yet: git follows it once its target appears.
    if (gitDir !== null && !before.commondir && entryKind(join(gitDir, "commondir")) !== "missing") {
      planted.push(".git/commondir");
      quarantine(join(gitDir, "commondir"), ".git/commondir", quarantineDir);
    }
    for (const path of outside.filter((path) => !before.outside.has(path) && entryKind(path) !== "missing")) {
      planted.push(path);
      quarantine(path, path, quarantineDir);
    }
    for (const path of (await nestedRepositories(workDir)).filter((path) => !before.nested.has(path))) {
      planted.push(path);
      quarantine(join(workDir, path), path, quarantineDir);
    }
    if (gitDir !== null) {
      const added = (await gitlinks(workDir, env)).filter((path) => !before.links.has(path));
      if (added.length > 0) {
        // Literal: a gitlink named `:(glob)*` must not take the rest of the index with it (and stay itself).
        const removed = await runGit(
          workDir,
          ["rm", "-q", "--cached", "--", ...added],
          { ...env, GIT_LITERAL_PATHSPECS: "1" },
          { timeoutMs: 30_000 },
        );
        if (!removed.ok)
          throw new Error(
            `the tamper scan could not take planted gitlinks out of the index (${added.join(", ")}): ${removed.stderr.trim() || removed.code}`,
          );
      }
      for (const path of added) planted.push(`${path} (a gitlink in the index)`);
    }
    return planted;
  };
}
