// Reopens tasks in a task list file: `passes: false` in a prd.json, `[ ]` on a checklist line. Only the flag
// or the checkbox changes; every other byte of the file stays as it was.
import { locateStoryFlags } from "./story-flags.js";
import { parseTasks } from "./tasks.js";
import { rewriteTaskFile } from "./rewrite-task-file.js";

/** The outcome of reopening: the ids reopened (those marked done), or why the file could not be changed. */
export type ReopenResult = { ok: true; reopened: string[] } | { ok: false; message: string };

/** Marks tasks `ids` not done in `file`, replacing it atomically (keeping its mode). */
export function reopenTasks(file: string, ids: readonly string[]): ReopenResult {
  const result = rewriteTaskFile(file, (text) => {
    const parsed = parseTasks(text, file);
    if (!parsed.ok) return { ok: false, message: parsed.message };
    const wanted = new Set(ids);
    const reopened = parsed.tasks.filter((task) => task.done && wanted.has(task.id)).map((task) => task.id);
    if (reopened.length === 0) return { ok: true, text: null, value: reopened };
    const updated =
      parsed.format === "prd"
        ? reopenStories(text, new Set(reopened))
        : reopenLines(
            text,
            parsed.tasks.filter((task) => reopened.includes(task.id)).map((task) => task.line ?? 0),
          );
    if (updated === null) return { ok: false, message: "could not be changed in place" };
    return { ok: true, text: updated, value: reopened };
  });
  return result.ok ? { ok: true, reopened: result.value } : result;
}

function reopenStories(text: string, ids: Set<string>): string | null {
  const flags = locateStoryFlags(text);
  if (!flags) return null;
  // From the end, so earlier offsets stay valid.
  const ranges = flags
    .filter((flag) => ids.has(flag.id) && flag.passes)
    .map((flag) => flag.passes as { start: number; end: number });
  let result = text;
  for (const range of ranges.sort((a, b) => b.start - a.start))
    result = `${result.slice(0, range.start)}false${result.slice(range.end)}`;
  return result;
}

function reopenLines(text: string, lineNumbers: number[]): string {
  const pieces = text.split(/(\r\n|\r|\n)/);
  // split keeps the separators at odd indexes: line N is at index 2 * (N - 1).
  for (const line of lineNumbers) {
    const at = 2 * (line - 1);
    pieces[at] = (pieces[at] ?? "").replace(/\[[xX]\]/, "[ ]");
  }
  return pieces.join("");
}
