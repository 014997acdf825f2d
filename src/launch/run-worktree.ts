// Where a run works: its git worktree (`--worktree`, created or found again), or the project itself.
import { relative, resolve } from "node:path";
import type { RunSettings } from "../config/run-options.js";
import { loadTasks } from "../judge/tasks.js";
import { checkCommitAuthor, commitIteration } from "../worktree/commit-iteration.js";
import { createWorktree, removeNewWorktree, reuseWorktree, type RunWorktree } from "../worktree/open-worktree.js";
import type { EngineIo } from "../engine/engine-io.js";
import type { WorktreeFailure } from "../worktree/worktree-failure.js";
import { branchExists, currentBranch, realPath, repositoryOf, worktreeBranch } from "../worktree/worktree-location.js";
import { runGit } from "../worktree/run-git.js";
import { LaunchFailure, refused } from "./launch-failure.js";

/** The place a run works in; `undo` removes a worktree made for a run that then could not start. */
export interface WorkPlace {
  dir: string;
  worktree: RunWorktree | null;
  undo: () => Promise<void>;
  /** A new worktree: the commit it started from, and the branch the person had checked out (null: detached). */
  base?: { commit: string; branch: string | null };
  /**
   * A task branch found again (`--task-index`), whose tree earlier agents wrote: the commit the person's run
   * starts from (HEAD, or the parent's branch), where the scripts ralph pins are read instead.
   */
  personCommit?: string;
}

/** The commit policy in force: `--commit` as given, else `iteration` with worktrees (--worktree, --parallel), else `off`. */
export function commitPolicy(settings: Pick<RunSettings, "worktree" | "commit" | "parallel">): "iteration" | "off" {
  return settings.commit ?? (settings.worktree || settings.parallel !== null ? "iteration" : "off");
}

/**
 * Creates the run's worktree (or, continuing, finds it again) after checking who would commit in it.
 * Every failure is a LaunchFailure, and a worktree made here is removed again before it is thrown.
 */
export async function openWorkPlace(
  projectDir: string,
  runId: string,
  settings: RunSettings,
  continuing: boolean,
): Promise<WorkPlace> {
  const nothing = async () => undefined;
  // A resolve run works in its parent's integration worktree, where the merge waits; it commits nothing.
  if (settings.resolve && settings.parent) {
    const opened = await reuseWorktree(projectDir, settings.parent);
    if (!opened.ok) throw new LaunchFailure({ kind: "worktree", flag: "--resolve", failure: opened.failure });
    return { dir: opened.cwd, worktree: null, undo: nothing };
  }
  if (!settings.worktree && settings.parallel === null) return { dir: projectDir, worktree: null, undo: nothing };
  // Outside a repository the missing repository is the first thing to fix, not the missing git identity.
  const flag = settings.parallel !== null ? "--parallel" : "--worktree";
  const repo = await repositoryOf(projectDir);
  if ("error" in repo)
    throw new LaunchFailure({
      kind: "worktree",
      flag,
      failure: { kind: "not-a-repo", dir: projectDir, detail: repo.error },
    });
  if (commitPolicy(settings) === "iteration") {
    const author = await checkCommitAuthor(projectDir);
    if (!author.ok) throw new LaunchFailure({ kind: "worktree", flag: "--commit iteration", failure: author.failure });
  }
  // A --parallel parent integrates on a worktree of its own, from HEAD, so HEAD must hold the task list.
  if (settings.parallel !== null) await checkTasksInHead(projectDir, settings.tasks ?? "");
  // A child starts from its parent's integration branch: what was merged so far is where it begins.
  const from =
    settings.parent !== null && (await branchExists(projectDir, worktreeBranch(settings.parent)))
      ? `refs/heads/${worktreeBranch(settings.parent)}`
      : "HEAD";
  const baseBranch = continuing ? null : await currentBranch(projectDir);
  // A run named after its task (--task-index) goes on from that task's branch when one is there.
  const opened = continuing
    ? await reuseWorktree(projectDir, runId)
    : await createWorktree(projectDir, runId, from, { reuseBranch: settings.taskIndex !== null });
  if (!opened.ok) throw new LaunchFailure({ kind: "worktree", flag, failure: opened.failure });
  const worktree: RunWorktree = { path: opened.path, branch: opened.branch, cwd: opened.cwd };
  const kept = "reused" in opened && opened.reused === true;
  const undo = continuing ? nothing : () => removeNewWorktree(projectDir, worktree, kept);
  const base =
    "base" in opened && typeof opened.base === "string" ? { commit: opened.base, branch: baseBranch } : undefined;
  if (settings.tasks) {
    const tasks = loadTasks(resolve(worktree.cwd, settings.tasks));
    if (!tasks.ok) {
      await undo();
      throw refused(
        `--tasks ${settings.tasks}: in the worktree ${tasks.message} (a worktree starts from HEAD: commit the task list first)`,
      );
    }
  }
  const personCommit = kept && "start" in opened && typeof opened.start === "string" ? opened.start : undefined;
  return { dir: worktree.cwd, worktree, undo, ...(base ? { base } : {}), ...(personCommit ? { personCommit } : {}) };
}

/** Refuses a --parallel run whose repository has no HEAD, or whose HEAD lacks the task list the children need. */
async function checkTasksInHead(projectDir: string, tasks: string): Promise<void> {
  const repo = await repositoryOf(projectDir);
  if ("error" in repo)
    throw new LaunchFailure({
      kind: "worktree",
      flag: "--parallel",
      failure: { kind: "not-a-repo", dir: projectDir, detail: repo.error },
    });
  const inRepo = relative(repo.top, realPath(resolve(projectDir, tasks)));
  if (!(await runGit(projectDir, ["cat-file", "-e", `HEAD:${inRepo}`])).ok) {
    throw refused(
      `--tasks ${tasks}: not in HEAD; each --parallel child works in a worktree from HEAD, so commit the task list first`,
    );
  }
}

/** The engine's commit step: the worktree library, with a failure worded for the log by `say`. */
export function commitForEngine(say: (failure: WorktreeFailure) => string): NonNullable<EngineIo["commitIteration"]> {
  return async (what) => {
    const done = await commitIteration(what);
    return done.ok ? { ok: true, commit: done.commit, files: done.files } : { ok: false, message: say(done.failure) };
  };
}
