// Replaces a file atomically: write a temporary file beside it, then rename over it.
import { closeSync, fsyncSync, openSync, renameSync, unlinkSync, writeSync } from "node:fs";

/**
 * Writes `text` to `file` so that readers see either the old or the new content, never a mix.
 * `durable` also flushes the data to disk before the rename (costly; status.json, rewritten all the
 * time, skips it).
 */
export function writeFileAtomic(file: string, text: string | Buffer, mode = 0o600, durable = true): void {
  const temporary = `${file}.${process.pid}.${Date.now().toString(36)}.tmp`;
  const fd = openSync(temporary, "wx", mode);
  try {
    writeSync(fd, typeof text === "string" ? Buffer.from(text) : text);
    if (durable) fsyncSync(fd);
  } catch (error) {
    closeSync(fd);
    unlinkSync(temporary);
    throw error;
  }
  closeSync(fd);
  renameSync(temporary, file);
}
