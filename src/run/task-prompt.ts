// The current task as the agent reads it: the whole task (id, title, description, acceptance criteria,
// notes), the file that holds the list, and how a task is marked done there.
import { describeTask, type Task, type TaskFormat } from "../judge/tasks.js";

/** The text of the "Current task" section for `task` from `file` (as the run names it); `gated`: checks gate the marks. */
export function taskForPrompt(task: Task, file: string, format: TaskFormat, gated: boolean): string {
  const parts = [describeTask(task)];
  if (task.description) parts.push(`Description:\n${task.description}`);
  if (task.acceptance?.length)
    parts.push(`Acceptance criteria:\n${task.acceptance.map((line) => `- ${line}`).join("\n")}`);
  if (task.notes) parts.push(`Notes:\n${task.notes}`);
  const gate = gated
    ? " It counts as done only once the run's checks pass; a task marked done while a check fails is reopened."
    : "";
  parts.push(`${howToMark(task, file, format)}${gate}`);
  return parts.join("\n\n");
}

function howToMark(task: Task, file: string, format: TaskFormat): string {
  switch (format) {
    case "prd":
      return `The task list is ${file}. When this task is done, set "passes" to true on the story with "id" ${JSON.stringify(task.id)} there, and change nothing else in that file.`;
    case "checklist":
      return `The task list is ${file}. When this task is done, tick its box on line ${task.line ?? "?"} there ("- [ ]" becomes "- [x]"), and change nothing else in that file.`;
    default: {
      const unreachable: never = format;
      throw new Error(`unknown task format ${String(unreachable)}`);
    }
  }
}
