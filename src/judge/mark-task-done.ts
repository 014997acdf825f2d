// Marks one task done in a task list file: `passes: true` in a prd.json, `[x]` on a checklist line.
import { realpathSync, statSync } from "node:fs";
import { writeFileAtomic } from "../store/atomic-write.js";
import { readRegular } from "../store/regular-file.js";
import { parseTasks, type Task } from "./tasks.js";

/**
 * Marks task `id` done in `file` and replaces the file atomically (keeping its mode), or returns why it
 * could not. Only that task's flag changes; a prd.json is rewritten with two-space indentation.
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
  const parsed = parseTasks(text, file);
  if (!parsed.ok) return { ok: false, message: parsed.message };
  const task = parsed.tasks.find((candidate) => candidate.id === id);
  if (!task) return { ok: false, message: `has no task ${id} any more` };
  let updated: string;
  if (parsed.format === "prd") {
    const prd = JSON.parse(text.replace(/^\uFEFF/, "")) as { userStories: Array<Record<string, unknown>> };
    for (const story of prd.userStories) if (String(story.id) === id) story.passes = true;
    updated = `${JSON.stringify(prd, null, 2)}\n`;
  } else {
    const lines = text.split(/(\r\n|\r|\n)/);
    // split keeps the separators at odd indexes: line N is at index 2 * (N - 1).
    const at = 2 * ((task.line ?? 0) - 1);
    lines[at] = (lines[at] ?? "").replace(/\[ \]/, "[x]");
    updated = lines.join("");
  }
  try {
    writeFileAtomic(real, updated, statSync(real).mode & 0o777);
  } catch (error) {
    return { ok: false, message: `cannot be written: ${(error as Error).message}` };
  }
  return { ok: true, task: { ...task, done: true } };
}
