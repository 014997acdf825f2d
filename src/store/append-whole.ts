// Appending whole lines only: a write cut short (a full disk) is taken back, so no torn line is left
// for the next append to run into.
import { closeSync, fstatSync, ftruncateSync, writeSync } from "node:fs";
import { openAppend } from "./regular-file.js";

/**
 * Appends `text` to `target` (a path, or a descriptor opened for appending) in full or not at all:
 * on a failed write the file is cut back to its size before, and the error is thrown.
 */
export function appendWhole(target: string | number, text: string): void {
  // Never through a link, never blocking on a FIFO (regular-file.ts).
  const fd = typeof target === "number" ? target : openAppend(target);
  try {
    const data = Buffer.from(text, "utf8");
    const before = fstatSync(fd).size;
    try {
      for (let written = 0; written < data.length;) written += writeSync(fd, data, written, data.length - written);
    } catch (error) {
      // Taking back a part-written line needs no space; if even that fails, the next reader skips a bad line.
      try {
        ftruncateSync(fd, before);
      } catch {
        // nothing more can be done here
      }
      throw error;
    }
  } finally {
    if (typeof target !== "number") closeSync(fd);
  }
}
