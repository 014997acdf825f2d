// Marks a task done in the text of a task list, changing only its flag: the `passes` value of a prd.json
// story (every other byte, one-line stories included, stays as it was) or the box of a checklist line.
import { parseTasks } from "./tasks.js";
import { locateStoryFlags } from "./story-flags.js";

/** The text with task `id` marked done, or why it could not be. */
export function markTaskInText(
  text: string,
  file: string,
  id: string,
): { ok: true; text: string } | { ok: false; message: string } {
  const parsed = parseTasks(text, file);
  if (!parsed.ok) return { ok: false, message: parsed.message };
  const task = parsed.tasks.find((candidate) => candidate.id === id);
  if (!task) return { ok: false, message: `has no task ${id} any more` };
  if (parsed.format === "checklist") {
    const lines = text.split(/(\r\n|\r|\n)/);
    // split keeps the separators at odd indexes: line N is at index 2 * (N - 1).
    const at = 2 * ((task.line ?? 0) - 1);
    lines[at] = (lines[at] ?? "").replace(/\[ \]/, "[x]");
    return { ok: true, text: lines.join("") };
  }
  const story = locateStoryFlags(text)?.find((candidate) => candidate.id === id);
  if (!story) return { ok: false, message: `has no task ${id} any more` };
  if (story.passes)
    return { ok: true, text: `${text.slice(0, story.passes.start)}true${text.slice(story.passes.end)}` };
  // No `passes` yet: added just before the story's closing brace.
  const before = text.slice(0, story.close).trimEnd();
  const comma = before.endsWith("{") ? "" : ",";
  const at = before.length;
  return { ok: true, text: `${text.slice(0, at)}${comma} "passes": true${text.slice(at)}` };
}
