// Follows an append-only file from a byte offset: fs.watch for speed, a stat timer as the fallback.
import { closeSync, constants, existsSync, fstatSync, readSync, watch, type FSWatcher } from "node:fs";
import { openRegular } from "../store/regular-file.js";
import { basename, dirname } from "node:path";

/** Checks the file this often even when fs.watch works (it misses writes on some network file systems). */
const SAFETY_MS = 1000;
/** Checks this often when fs.watch cannot be used at all. */
const FALLBACK_MS = 100;
/** At most this much is read per wake-up, so one huge append cannot stall the server. */
const CHUNK = 4 * 1024 * 1024;

/** A running tail; `close` stops it, `poke` reads again at once (e.g. when a held reader is ready again). */
export interface Tail {
  close(): void;
  poke(): void;
}

/**
 * Complete lines of `file` from byte `from` on; `onLines` gets them with the offset just past the last one.
 * One chunk is read per turn of the event loop, so a huge append never holds up other work, and nothing is
 * read while `held()` says the reader is still busy with what it got.
 */
export function tailLines(
  file: string,
  from: number,
  onLines: (lines: string[], end: number) => void,
  held: () => boolean = () => false,
): Tail {
  let offset = from;
  let watcher: FSWatcher | null = null;
  let closed = false;
  let again: NodeJS.Immediate | null = null;
  const drain = () => {
    if (closed || again !== null || held()) return;
    // The same rules as the runner's: never through a link, never blocking on a FIFO (a file an agent
    // planted is not shown), regular files only.
    let fd: number;
    try {
      fd = openRegular(file, constants.O_RDONLY);
    } catch {
      return;
    }
    let read: number;
    let buffer: Buffer;
    try {
      const size = fstatSync(fd).size;
      if (size < offset) offset = 0; // replaced or truncated: start over
      if (size === offset) return;
      buffer = Buffer.alloc(Math.min(size - offset, CHUNK));
      read = readSync(fd, buffer, 0, buffer.length, offset);
    } finally {
      closeSync(fd);
    }
    const end = buffer.subarray(0, read).lastIndexOf(0x0a);
    if (end < 0 && read < CHUNK) return; // a line still being written: wait for its newline
    if (end < 0)
      offset += read; // no reader wants a 4 MB line: skip it
    else {
      const text = buffer.subarray(0, end).toString("utf8");
      offset += end + 1;
      onLines(text.split("\n"), offset);
    }
    if (read === CHUNK) again = setImmediate(() => ((again = null), drain()));
  };
  const startWatch = () => {
    try {
      // Until the file exists, its directory says when it appears.
      const target = existsSync(file) ? file : dirname(file);
      watcher = watch(target, (_event, name) => {
        if (target === file || name === basename(file)) {
          drain();
          if (target !== file && existsSync(file)) restartWatch();
        }
      });
      watcher.on("error", () => restartWatch());
      return true;
    } catch {
      return false;
    }
  };
  const restartWatch = () => {
    watcher?.close();
    watcher = null;
    if (!closed) startWatch();
  };
  const watching = startWatch();
  const timer = setInterval(drain, watching ? SAFETY_MS : FALLBACK_MS);
  drain();
  return {
    close() {
      closed = true;
      clearInterval(timer);
      if (again) clearImmediate(again);
      watcher?.close();
    },
    poke: drain,
  };
}
