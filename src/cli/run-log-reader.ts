// Reads a run's record as it grows: events.jsonl and run.log, merged in time order, for `ralph logs`.
import { closeSync, constants, existsSync, fstatSync, readSync } from "node:fs";
import { openRegular } from "../store/regular-file.js";
import type { RunEvent } from "../store/event-log.js";
import type { RunPaths } from "../store/run-paths.js";

/** One entry of the merged record. */
export type LogEntry = { ts: string; event: RunEvent } | { ts: string; line: string };

/** Reads the complete lines appended to a file since the last call (a partial last line waits). */
class Tail {
  private offset = 0;
  private rest = "";

  constructor(private readonly file: string) {}

  lines(): string[] {
    if (!existsSync(this.file)) return [];
    // No-follow, non-blocking, regular files only: a planted link or FIFO is refused, never waited on.
    const fd = openRegular(this.file, constants.O_RDONLY);
    let buffer: Buffer;
    try {
      const size = fstatSync(fd).size;
      if (size <= this.offset) return [];
      buffer = Buffer.alloc(size - this.offset);
      readSync(fd, buffer, 0, buffer.length, this.offset);
      this.offset = size;
    } finally {
      closeSync(fd);
    }
    const parts = (this.rest + buffer.toString("utf8")).split("\n");
    this.rest = parts.pop() ?? "";
    return parts;
  }
}

/** Returns a reader: each call gives what was appended since, events before log lines of the same moment. */
export function runLogReader(paths: Pick<RunPaths, "events" | "log">): () => LogEntry[] {
  const events = new Tail(paths.events);
  const log = new Tail(paths.log);
  return () => {
    const entries: LogEntry[] = [];
    for (const text of events.lines()) {
      try {
        const event = JSON.parse(text) as RunEvent;
        if (event && typeof event.ts === "string") entries.push({ ts: event.ts, event });
      } catch {
        // A line cut short or written by someone else says nothing to show.
      }
    }
    for (const text of log.lines()) {
      const match = /^(\S+) (.*)$/.exec(text);
      if (match) entries.push({ ts: match[1] as string, line: match[2] as string });
    }
    // Stable: at the same timestamp an event stays before the log line it led to.
    return entries.sort((a, b) => (a.ts < b.ts ? -1 : a.ts > b.ts ? 1 : 0));
  };
}
