// A `--parallel` parent's integration worktree as the fan-out needs it: where it is, the task file's path
// and committed text there, and the commit and branch the run started from.
import { relative, resolve } from "node:path";
import type { RunSettings } from "../config/run-options.js";
import type { Criterion } from "../judge/criteria.js";
import type { Plan } from "../store/plan-file.js";
import { readEventFile } from "../store/read-events.js";
import { runPaths } from "../store/run-paths.js";
import { fileAt, headOf, resetTo } from "../worktree/integration-git.js";
import { realPath } from "../worktree/worktree-location.js";
import type { FanOutOptions } from "../parallel/fan-out.js";
import type { WorkPlace } from "./run-worktree.js";
import { refused } from "./launch-failure.js";

/** Where the parent integrates: its worktree's top, the directory checks run in, the task file from the top, the checks. */
export interface IntegrationPlace {
  top: string;
  cwd: string;
  tasksPath: string;
  checks: Criterion[];
  checkTimeoutMs: number;
}

/**
 * Opens the integration side of a parent run. Continuing, whatever a killed parent left half done there
 * (a merge, stray files) is undone first: the branch's last commit is the parent's last word.
 */
export async function openIntegration(
  projectDir: string,
  runId: string,
  settings: RunSettings,
  plan: Plan,
  place: WorkPlace,
): Promise<{ options: FanOutOptions["integration"]; place: IntegrationPlace }> {
  const worktree = place.worktree;
  if (!worktree || !settings.tasks) throw refused("--parallel: the integration worktree could not be opened");
  const top = realPath(worktree.path);
  const tasksPath = relative(top, realPath(resolve(worktree.cwd, settings.tasks)));
  let base = place.base ?? null;
  let target = "HEAD";
  if (!base) {
    // Continuing: the branch goes back to the parent's own last word (its last merge, else where it began),
    // whatever moved it while no parent watched.
    const events = readEventFile(runPaths(projectDir, runId).events);
    const started = events.find((event) => event.type === "run_started" && typeof event.base === "string");
    base = started
      ? { commit: started.base as string, branch: (started.base_branch as string | null | undefined) ?? null }
      : { commit: "", branch: null };
    const merged = events.filter((event) => event.type === "child_merged" && typeof event.commit === "string").at(-1);
    target = (merged?.commit as string | undefined) ?? (base.commit || "HEAD");
  }
  const reset = await resetTo(top, target);
  if (!reset.ok) throw refused(`--parallel: ${worktree.path}: ${reset.message}`);
  const head = await headOf(top);
  if (!head.ok) throw refused(`--parallel: ${worktree.path}: ${head.message}`);
  const text = await fileAt(top, head.commit, tasksPath);
  if (!text.ok) throw refused(`--tasks ${settings.tasks}: not on ${worktree.branch}: ${text.message}`);
  const checks: Criterion[] = plan.completionCriteria.filter((criterion) => criterion.type === "command");
  return {
    options: {
      path: worktree.path,
      branch: worktree.branch,
      head: head.commit,
      tasksPath,
      tasksText: text.text,
      base: base.commit,
      baseBranch: base.branch,
    },
    place: { top, cwd: worktree.cwd, tasksPath, checks, checkTimeoutMs: settings.timeoutMs },
  };
}
