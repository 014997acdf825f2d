// Helpers for tests with real git: throwaway repositories isolated from the machine's git config.
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

const dirs: string[] = [];

/**
 * Points git at an empty global config and no system config, for this test process and what it runs,
 * so the author comes only from each repository's own config. Returns a cleanup.
 */
export function isolateGitConfig(): () => void {
  const dir = mkdtempSync(join(tmpdir(), "ralph-gitconfig-"));
  writeFileSync(join(dir, "gitconfig"), "");
  process.env.GIT_CONFIG_GLOBAL = join(dir, "gitconfig");
  process.env.GIT_CONFIG_NOSYSTEM = "1";
  return () => {
    rmSync(dir, { recursive: true, force: true });
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  };
}

/** `git args...` in `cwd`, its stdout as printed. */
export function gitRaw(cwd: string, ...args: string[]): string {
  return execFileSync("git", args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
}

/** `git args...` in `cwd`, its trimmed stdout. */
export function git(cwd: string, ...args: string[]): string {
  return gitRaw(cwd, ...args).trim();
}

/**
 * A new repository with one commit (README.md and, with `ignoreRalph`, a .gitignore holding `.ralph/`);
 * `author: false` leaves user.name and user.email unset.
 */
export function tempRepo({ commit = true, ignoreRalph = true, author = true } = {}): string {
  const dir = mkdtempSync(join(tmpdir(), "ralph-git-"));
  dirs.push(dir);
  git(dir, "init", "-q", "-b", "main");
  if (author) {
    git(dir, "config", "user.name", "Ada Tester");
    git(dir, "config", "user.email", "ada@example.test");
  }
  if (!commit) return dir;
  writeFileSync(join(dir, "README.md"), "hello\n");
  if (ignoreRalph) writeFileSync(join(dir, ".gitignore"), ".ralph/\n");
  git(dir, "add", "-A");
  git(dir, "-c", "user.name=Init", "-c", "user.email=init@example.test", "commit", "-q", "-m", "first");
  return dir;
}

/** The person's side of a repository: HEAD, branch, status and the index file's bytes, read without writing anything. */
export function checkoutSnapshot(dir: string): { head: string; branch: string; status: string; index: string } {
  // The index hash first: `git status` may refresh the index, so it runs with optional locks off.
  const index = createHash("sha256")
    .update(readFileSync(join(dir, ".git", "index")))
    .digest("hex");
  let branch: string;
  try {
    branch = git(dir, "symbolic-ref", "-q", "HEAD");
  } catch {
    branch = "(detached)";
  }
  return {
    index,
    head: git(dir, "rev-parse", "HEAD"),
    branch,
    status: gitRaw(dir, "--no-optional-locks", "status", "--porcelain=v1", "--untracked-files=all"),
  };
}

/** Three pending prd.json stories, US-1 to US-3 titled one, two, three. */
export const STORIES = ["one", "two", "three"].map((title, index) => ({
  id: `US-${index + 1}`,
  title,
  passes: false,
  priority: index + 1,
}));

/** A repository (see tempRepo) whose HEAD also holds a prd.json of STORIES and `files` (path → text). */
export function storiesRepo(files: Record<string, string> = {}): string {
  const repo = tempRepo();
  writeFileSync(join(repo, "prd.json"), `${JSON.stringify({ userStories: STORIES }, null, 2)}\n`);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(repo, path)), { recursive: true });
    writeFileSync(join(repo, path), text);
  }
  git(repo, "add", "-A");
  git(repo, "commit", "-q", "-m", "stories");
  return repo;
}
