// Everything the runner writes about a run: status.json, events.jsonl, run.log and progress.txt.
import { appendFileSync, closeSync, mkdirSync, openSync } from "node:fs";
import { appendEvent, type EventBody, type RunEvent } from "../store/event-log.js";
import { appendProgress, type ProgressBlock } from "../store/progress-log.js";
import type { RunPaths } from "../store/run-paths.js";
import { writeStatusFile, type RunStatus } from "../store/status-file.js";

/** Receives the run's event stream and log lines as they are recorded (the terminal renderer, for one). */
export interface RecordListener {
  event(event: RunEvent): void;
  log(line: string): void;
}

/** One thing to record: a log line, an event, or a progress.txt block. */
export type RecordEntry = { kind: "log"; line: string } | { kind: "event"; body: EventBody } | { kind: "progress"; block: ProgressBlock };

/** Writes a run's files; the one object the loop records through. */
export class RunRecord {
  private heartbeat: NodeJS.Timeout | null = null;
  /** events.jsonl stays open while the run records (an agent can emit an event per output line). */
  private eventsFd: number | null = null;

  constructor(
    readonly paths: RunPaths,
    private current: RunStatus,
    private readonly listener: RecordListener,
    private readonly now: () => Date,
  ) {}

  /** Creates the run directory (0700) and writes the first status. */
  static create(paths: RunPaths, status: RunStatus, listener: RecordListener, now: () => Date): RunRecord {
    mkdirSync(paths.dir, { recursive: true, mode: 0o700 });
    const record = new RunRecord(paths, status, listener, now);
    record.writeStatus();
    return record;
  }

  /** The last status written. */
  get status(): Readonly<RunStatus> {
    return this.current;
  }

  /** Merges `patch` into status.json and replaces the file. */
  update(patch: Partial<RunStatus>): void {
    this.current = { ...this.current, ...patch };
    this.writeStatus();
  }

  /** Records each entry in order. */
  apply(entries: readonly RecordEntry[]): void {
    for (const entry of entries) {
      switch (entry.kind) {
        case "log":
          this.log(entry.line);
          break;
        case "event":
          this.event(entry.body);
          break;
        case "progress":
          this.progress(entry.block);
          break;
        default: {
          const unreachable: never = entry;
          throw new Error(`unknown record entry ${JSON.stringify(unreachable)}`);
        }
      }
    }
  }

  /** Appends an event to events.jsonl and passes it on. */
  event(body: EventBody): void {
    const event: RunEvent = { v: 1, ts: this.now().toISOString(), run: this.current.run_id, ...body };
    this.eventsFd ??= openSync(this.paths.events, "a", 0o600);
    appendEvent(this.eventsFd, event);
    this.listener.event(event);
  }

  /** Appends a human-readable line to run.log and passes it on. */
  log(line: string): void {
    appendFileSync(this.paths.log, `${this.now().toISOString()} ${line}\n`, { mode: 0o600 });
    this.listener.log(line);
  }

  /** Appends a key=value block to progress.txt. */
  progress(block: ProgressBlock): void {
    appendProgress(this.paths.progress, block);
  }

  /**
   * Refreshes `updated_at` every `intervalMs` so readers can tell a live runner from a dead one.
   * The timer is deliberately ref'd: until finishRun stops it, the process cannot fall out of its
   * event loop and exit without recording how the run ended.
   */
  startHeartbeat(intervalMs = 5000): void {
    this.heartbeat ??= setInterval(() => {
      try {
        this.writeStatus();
      } catch {
        // A failed refresh (disk full, directory gone) must not kill the runner; the next boundary writes again.
      }
    }, intervalMs);
  }

  /** Stops the heartbeat. */
  stopHeartbeat(): void {
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.heartbeat = null;
  }

  /** Closes what the record holds open (it reopens on the next event). */
  close(): void {
    if (this.eventsFd !== null) closeSync(this.eventsFd);
    this.eventsFd = null;
  }

  private writeStatus(): void {
    this.current = { ...this.current, updated_at: this.now().toISOString() };
    writeStatusFile(this.paths.status, this.current);
  }
}
