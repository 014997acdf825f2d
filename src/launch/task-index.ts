// `--task-index N`: the Nth task of the list (0-based, file order) becomes the run's one task, and names the run.
import { resolve } from "node:path";
import type { RunSettings } from "../config/run-options.js";
import { parseCount } from "../util/parse-value.js";
import { loadTasks, type Task } from "../judge/tasks.js";
import { refused } from "./launch-failure.js";

/** The variable a Kubernetes Indexed Job sets in each pod to the pod's index. */
export const JOB_INDEX_VARIABLE = "JOB_COMPLETION_INDEX";

/**
 * With --task-index: the settings with `task` set to that task's id and, unless --name was given, the run
 * named after the task (so `--worktree` works on branch `ralph/<task id>`). Without it, the settings as they are.
 * How --task-index goes with --task and --parallel is checked before, in config/check-settings.ts.
 */
export function pickTaskByIndex(settings: RunSettings, projectDir: string, env: NodeJS.ProcessEnv): RunSettings {
  if (settings.taskIndex === null) return settings;
  if (!settings.tasks) throw refused("--task-index needs --tasks FILE: the task list it picks a task of");
  const index = settings.taskIndex === "job" ? jobIndex(env) : settings.taskIndex;
  const list = loadTasks(resolve(projectDir, settings.tasks));
  if (!list.ok) throw refused(`--tasks ${settings.tasks}: ${list.message}`);
  const task = list.tasks[index];
  if (!task) {
    const count = list.tasks.length;
    throw refused(
      `--task-index ${index}: expected 0 to ${count - 1}, the positions of the ${count} task(s) in ${settings.tasks}`,
    );
  }
  return { ...settings, task: task.id, name: settings.name ?? runIdForTask(task, index) };
}

/** JOB_COMPLETION_INDEX as a whole number, or a LaunchFailure naming the variable. */
function jobIndex(env: NodeJS.ProcessEnv): number {
  const raw = env[JOB_INDEX_VARIABLE];
  if (raw === undefined)
    throw refused(
      `--task-index job: expected ${JOB_INDEX_VARIABLE} to be set (a Kubernetes Indexed Job sets it in each pod)`,
    );
  const parsed = parseCount(raw);
  if (!parsed.ok)
    throw refused(
      `--task-index job: expected ${JOB_INDEX_VARIABLE} to be ${parsed.expected}, got ${JSON.stringify(raw)}`,
    );
  return parsed.value;
}

/**
 * A run id (and so a branch name `ralph/<id>`) from a task's id: runs of characters a run id or a git ref
 * may not hold become one `-`; `task-<index>` when nothing is left. `US 1/a..b` → `US-1-a.b`.
 */
export function runIdForTask(task: Pick<Task, "id">, index: number): string {
  const id = task.id
    .replace(/[^A-Za-z0-9._-]+/g, "-")
    .replace(/\.{2,}/g, ".")
    .replace(/^[^A-Za-z0-9_]+/, "")
    .slice(0, 128)
    .replace(/(?:\.lock)+$/i, "")
    .replace(/[.-]+$/, "");
  return id === "" ? `task-${index}` : id;
}
