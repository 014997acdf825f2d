// Marks one task done in a task list file: `passes: true` in a prd.json, `[x]` on a checklist line.
import { realpathSync, statSync } from "node:fs";
import { writeFileAtomic } from "../store/atomic-write.js";
import { readRegular } from "../store/regular-file.js";
import { parseTasks, type Task } from "./tasks.js";
import { markTaskInText } from "./task-text.js";

/**
 * Marks task `id` done in `file` and replaces the file atomically (keeping its mode), or returns why it
 * could not. Only that task's flag changes: every other byte stays.
 */
export function markTaskDone(file: string, id: string): { ok: true; task: Task } | { ok: false; message: string } {
  let real: string;
  let text: string;
  try {
    real = realpathSync(file);
    text = readRegular(real).toString("utf8");
  } catch (error) {
    return { ok: false, message: `cannot be read: ${(error as Error).message}` };
  }
  const marked = markTaskInText(text, file, id);
  if (!marked.ok) return marked;
  const task = (parseTasks(text, file) as { ok: true; tasks: Task[] }).tasks.find((candidate) => candidate.id === id) as Task;
  const updated = marked.text;
  try {
    writeFileAtomic(real, updated, statSync(real).mode & 0o777);
  } catch (error) {
    return { ok: false, message: `cannot be written: ${(error as Error).message}` };
  }
  return { ok: true, task: { ...task, done: true } };
}
