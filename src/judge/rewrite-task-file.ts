// Changes a task list file in place: read through links as a regular file, changed as text, replaced
// atomically with its mode kept. Marking done and reopening both go through it.
import { realpathSync, statSync } from "node:fs";
import { writeFileAtomic } from "../store/atomic-write.js";
import { readRegular } from "../store/regular-file.js";

/** What a change makes of the text: the new text (null: leave the file as it is) and its result, or why not. */
export type TextChange<T> = { ok: true; text: string | null; value: T } | { ok: false; message: string };

/** Applies `change` to the text of `file` and replaces the file with the result; or returns why it could not. */
export function rewriteTaskFile<T>(
  file: string,
  change: (text: string) => TextChange<T>,
): { ok: true; value: T } | { ok: false; message: string } {
  let real: string;
  let text: string;
  try {
    real = realpathSync(file);
    text = readRegular(real).toString("utf8");
  } catch (error) {
    return { ok: false, message: `cannot be read: ${(error as Error).message}` };
  }
  const changed = change(text);
  if (!changed.ok) return changed;
  if (changed.text === null) return { ok: true, value: changed.value };
  try {
    writeFileAtomic(real, changed.text, statSync(real).mode & 0o777);
  } catch (error) {
    return { ok: false, message: `cannot be written: ${(error as Error).message}` };
  }
  return { ok: true, value: changed.value };
}
