// Reads a run's record as it grows: events.jsonl and run.log, merged in time order, for `ralph logs`.
// Both files are read a chunk at a time and merged as they are read, so memory stays bounded whatever
// their size and the first lines show at once.
import { ForwardLines } from "../store/file-lines.js";
import type { RunEvent } from "../store/event-log.js";
import type { RunPaths } from "../store/run-paths.js";

/** One entry of the merged record. */
export type LogEntry = { ts: string; event: RunEvent } | { ts: string; line: string };

function parseEvent(text: string): LogEntry | null {
  try {
    const event = JSON.parse(text) as RunEvent;
    return event && typeof event.ts === "string" ? { ts: event.ts, event } : null;
  } catch {
    return null; // a line cut short or written by someone else says nothing to show
  }
}

function parseLogLine(text: string): LogEntry | null {
  const match = /^(\S+) (.*)$/.exec(text);
  return match ? { ts: match[1] as string, line: match[2] as string } : null;
}

/** One file's entries not yet given, refilled a chunk at a time. */
class Source {
  private queue: LogEntry[] = [];
  private index = 0;
  private dry = false;

  constructor(
    private readonly lines: ForwardLines,
    private readonly parse: (text: string) => LogEntry | null,
  ) {}

  /** The next entry without taking it; null once the file has nothing more right now. */
  async peek(): Promise<LogEntry | null> {
    while (this.index >= this.queue.length && !this.dry) {
      const lines = await this.lines.next();
      if (lines === null) this.dry = true;
      else [this.queue, this.index] = [lines.flatMap((text) => this.parse(text) ?? []), 0];
    }
    return this.queue[this.index] ?? null;
  }

  take(): void {
    this.index++;
  }

  /** Lets the next `peek` look at the file again (after it has run dry). */
  wake(): void {
    this.dry = false;
  }
}

/** Gives what was appended since the last call, in time order: an event before a log line of the same moment. */
export class RunLogReader {
  private readonly events: Source;
  private readonly log: Source;

  constructor(paths: Pick<RunPaths, "events" | "log">) {
    this.events = new Source(new ForwardLines(paths.events), parseEvent);
    this.log = new Source(new ForwardLines(paths.log), parseLogLine);
  }

  /**
   * Calls `onEntry` with every entry appended since the last call (awaiting it, so a slow reader slows the
   * reading), until `stop()` says the reader has gone.
   */
  async drain(onEntry: (entry: LogEntry) => void | Promise<void>, stop: () => boolean = () => false): Promise<void> {
    this.events.wake();
    this.log.wake();
    while (!stop()) {
      const [event, line] = [await this.events.peek(), await this.log.peek()];
      if (event === null && line === null) return;
      const source = line === null || (event !== null && event.ts <= line.ts) ? this.events : this.log;
      await onEntry((source === this.events ? event : line) as LogEntry);
      source.take();
    }
  }
}
