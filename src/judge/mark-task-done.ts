// Marks one task done in a task list file: `passes: true` in a prd.json, `[x]` on a checklist line.
import { parseTasks, type Task } from "./tasks.js";
import { markTaskInText } from "./task-text.js";
import { rewriteTaskFile } from "./rewrite-task-file.js";

/**
 * Marks task `id` done in `file` and replaces the file atomically (keeping its mode), or returns why it
 * could not. Only that task's flag changes: every other byte stays.
 */
export function markTaskDone(file: string, id: string): { ok: true; task: Task } | { ok: false; message: string } {
  const result = rewriteTaskFile(file, (text) => {
    const marked = markTaskInText(text, file, id);
    if (!marked.ok) return marked;
    const task = (parseTasks(text, file) as { ok: true; tasks: Task[] }).tasks.find(
      (candidate) => candidate.id === id,
    ) as Task;
    return { ok: true, text: marked.text, value: { ...task, done: true } };
  });
  return result.ok ? { ok: true, task: result.value } : result;
}
