// Runs git with an argv array (never a shell) in a clean environment, returning its outcome as a value.
import { execFile } from "node:child_process";

/** What one git command did. */
export type GitResult = { ok: true; stdout: string } | { ok: false; code: number | string | null; stderr: string };

// Variables that point git at another repository, index or object store. A git hook that runs ralph
// (pre-commit, post-checkout) hands them down; inherited, they would make every command below act on
// the outer repository's index instead of the worktree's.
const LOCATION_VARIABLES = [
  "GIT_DIR",
  "GIT_WORK_TREE",
  "GIT_INDEX_FILE",
  "GIT_OBJECT_DIRECTORY",
  "GIT_ALTERNATE_OBJECT_DIRECTORIES",
  "GIT_COMMON_DIR",
  "GIT_NAMESPACE",
  "GIT_PREFIX",
  "GIT_QUARANTINE_PATH",
  "GIT_CEILING_DIRECTORIES",
  "GIT_REFLOG_ACTION",
];

/** The environment git runs in: the caller's, minus repository locations, never prompting, messages untranslated. */
export function gitEnv(base: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...base };
  for (const name of LOCATION_VARIABLES) delete env[name];
  return { ...env, GIT_TERMINAL_PROMPT: "0", GIT_EDITOR: "true", GIT_PAGER: "cat", LC_ALL: "C", LANGUAGE: "C" };
}

/** Runs `git args...` in `cwd`; stdout is returned untrimmed, stderr's first lines on failure. */
export function runGit(cwd: string, args: readonly string[], env: NodeJS.ProcessEnv = process.env): Promise<GitResult> {
  return new Promise((resolve) => {
    execFile("git", [...args], { cwd, env: gitEnv(env), encoding: "utf8", maxBuffer: 64 * 1024 * 1024, timeout: 120_000 }, (error, stdout, stderr) => {
      if (!error) resolve({ ok: true, stdout });
      else resolve({ ok: false, code: (error as NodeJS.ErrnoException).code ?? null, stderr: stderr.trim() || error.message.split("\n")[0] || "failed" });
    });
  });
}
