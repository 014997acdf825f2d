// After an iteration: commits what the agent left changed in the worktree, never ralph's own files.
import { failed, gitFailed, type WorktreeOutcome } from "./worktree-failure.js";
import { clip } from "../util/clip.js";
import { currentBranch, EVERYTHING_BUT_RALPH, worktreeBranch } from "./worktree-location.js";
import { gitSession, runGit, type GitResult } from "./run-git.js";

/** One iteration to commit: the worktree (any directory in it), the run and what was worked on. */
export interface IterationToCommit {
  dir: string;
  runId: string;
  iteration: number;
  task?: string | null;
  /** Aborting ends the git command under way (a signal to the runner, stop --now). */
  signal?: AbortSignal;
}

const RALPH_FILES = [":(top,glob)**/.ralph/**"];
// An operation the agent left half done: committing now would conclude it in its place.
const OPERATIONS: Array<[string, string]> = [
  ["MERGE_HEAD", "a merge"],
  ["CHERRY_PICK_HEAD", "a cherry-pick"],
  ["REVERT_HEAD", "a revert"],
];
const SUBJECT_TASK_LIMIT = 100;

/** The commit message: `ralph(<id>): iteration N[: task]`, the task's first line, shortened. */
export function commitMessage(runId: string, iteration: number, task?: string | null): string {
  const title = (task ?? "").split("\n")[0]?.replace(/\s+/g, " ").trim() ?? "";
  const short = clip(title, SUBJECT_TASK_LIMIT);
  return `ralph(${runId}): iteration ${iteration}${short === "" ? "" : `: ${short}`}`;
}

/** Whether git knows who commits in `dir` (user.name and user.email, from config or GIT_AUTHOR_*), else which is missing. */
export async function checkCommitAuthor(
  dir: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<WorktreeOutcome<object>> {
  const missing: string[] = [];
  for (const [key, variable] of [
    ["user.name", "GIT_AUTHOR_NAME"],
    ["user.email", "GIT_AUTHOR_EMAIL"],
  ] as const) {
    const value = await runGit(dir, ["config", "--get", key], env);
    if (!(value.ok && value.stdout.trim() !== "") && !env[variable]) missing.push(key);
  }
  return missing.length === 0 ? { ok: true } : failed({ kind: "no-author", missing });
}

/**
 * Commits every change left in the worktree as one commit on `ralph/<id>`; `commit` is null when nothing
 * was left (the agent changed nothing, or committed everything itself). Never pushes, merges or rewrites:
 * the only write to history is this one new commit on the run's own branch.
 */
export async function commitIteration(
  { dir, runId, iteration, task, signal }: IterationToCommit,
  env: NodeJS.ProcessEnv = process.env,
): Promise<WorktreeOutcome<{ commit: string | null; files: number }>> {
  const session = await gitSession(dir, { env, signal });
  const git = async (args: string[]): Promise<GitResult> => {
    const result = await session(args);
    return result.ok ? { ok: true, stdout: result.stdout.toString("utf8") } : result;
  };
  const branch = worktreeBranch(runId);
  const actual = await currentBranch(dir);
  if (actual !== branch) return failed({ kind: "wrong-branch", path: dir, expected: branch, actual });
  for (const [ref, operation] of OPERATIONS) {
    if ((await git(["rev-parse", "-q", "--verify", ref])).ok)
      return failed({ kind: "operation-in-progress", path: dir, operation });
  }
  for (const args of [
    ["add", "--all", "--", ...EVERYTHING_BUT_RALPH],
    ["reset", "-q", "--", ...RALPH_FILES],
  ]) {
    // The exclude keeps git from even reading run files; the reset unstages `.ralph` files the agent staged itself.
    const done = await git(args);
    if (!done.ok) return gitFailed(args, done.stderr);
  }
  const staged = await git(["diff", "--cached", "--name-only", "-z"]);
  if (!staged.ok) return gitFailed(["diff", "--cached", "--name-only"], staged.stderr);
  const files = staged.stdout.split("\0").filter((name) => name !== "").length;
  if (files === 0) return { ok: true, commit: null, files: 0 };
  const author = await checkCommitAuthor(dir, env);
  if (!author.ok) return author;
  // Hooks and signing are the person's checks for their own commits; on the run's branch they would stop
  // the loop (a failing lint hook) or wait on a passphrase prompt no one sees.
  const args = [
    "-c",
    "user.useConfigOnly=true",
    "-c",
    "commit.gpgSign=false",
    "commit",
    "--no-verify",
    "--quiet",
    "-m",
    commitMessage(runId, iteration, task),
  ];
  const committed = await git(args);
  if (!committed.ok) return gitFailed(args.slice(4, 7), committed.stderr);
  const head = await git(["rev-parse", "HEAD"]);
  if (!head.ok) return gitFailed(["rev-parse", "HEAD"], head.stderr);
  return { ok: true, commit: head.stdout.trim(), files };
}
