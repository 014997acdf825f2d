// Where a run works: its git worktree (`--worktree`, created or found again), or the project itself.
import { resolve } from "node:path";
import type { RunSettings } from "../config/run-options.js";
import { loadTasks } from "../judge/tasks.js";
import { checkCommitAuthor, commitIteration } from "../worktree/commit-iteration.js";
import { createWorktree, removeNewWorktree, reuseWorktree, type RunWorktree } from "../worktree/open-worktree.js";
import type { EngineIo } from "../engine/engine-io.js";
import { renderWorktreeFailure } from "./render-worktree.js";
import { UsageError } from "./usage-error.js";

/** The place a run works in; `undo` removes a worktree made for a run that then could not start. */
export interface WorkPlace {
  dir: string;
  worktree: RunWorktree | null;
  undo: () => Promise<void>;
}

/** The commit policy in force: `--commit` as given, else `iteration` with a worktree and `off` without. */
export function commitPolicy(settings: Pick<RunSettings, "worktree" | "commit">): "iteration" | "off" {
  return settings.commit ?? (settings.worktree ? "iteration" : "off");
}

/** Checks --commit against --worktree before anything is created: ralph commits only on a run's own branch. */
export function checkCommitSettings(settings: Pick<RunSettings, "worktree" | "commit">): void {
  if (settings.commit === "iteration" && !settings.worktree) {
    throw new UsageError("--commit iteration needs --worktree: ralph commits only on a run's own branch, never on yours");
  }
}

/**
 * Creates the run's worktree (or, continuing, finds it again) after checking who would commit in it.
 * Every failure is a UsageError, and a worktree made here is removed again before it is thrown.
 */
export async function openWorkPlace(projectDir: string, runId: string, settings: RunSettings, continuing: boolean): Promise<WorkPlace> {
  const nothing = async () => undefined;
  if (!settings.worktree) return { dir: projectDir, worktree: null, undo: nothing };
  if (commitPolicy(settings) === "iteration") {
    const author = await checkCommitAuthor(projectDir);
    if (!author.ok) throw new UsageError(`--commit iteration: ${renderWorktreeFailure(author.failure)}`);
  }
  const opened = continuing ? await reuseWorktree(projectDir, runId) : await createWorktree(projectDir, runId);
  if (!opened.ok) throw new UsageError(`--worktree: ${renderWorktreeFailure(opened.failure)}`);
  const worktree: RunWorktree = { path: opened.path, branch: opened.branch, cwd: opened.cwd };
  const undo = continuing ? nothing : () => removeNewWorktree(projectDir, worktree);
  if (settings.tasks) {
    const tasks = loadTasks(resolve(worktree.cwd, settings.tasks));
    if (!tasks.ok) {
      await undo();
      throw new UsageError(`--tasks ${settings.tasks}: in the worktree ${tasks.message} (a worktree starts from HEAD: commit the task list first)`);
    }
  }
  return { dir: worktree.cwd, worktree, undo };
}

/** The engine's commit step: the worktree library, with a failure worded for the log. */
export const commitForEngine: NonNullable<EngineIo["commitIteration"]> = async (what) => {
  const done = await commitIteration(what);
  return done.ok ? { ok: true, commit: done.commit, files: done.files } : { ok: false, message: renderWorktreeFailure(done.failure) };
};
