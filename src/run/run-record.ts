// Everything the runner writes about a run: status.json, events.jsonl, run.log and progress.txt.
// Every write is redacted, and a failed one (a full disk) is kept by the WriteGuard instead of thrown.
import { closeSync, fstatSync, lstatSync, mkdirSync, type Stats } from "node:fs";
import { openAppend, RunFileError } from "../store/regular-file.js";
import { join } from "node:path";
import { Redactor } from "../redact/redactor.js";
import { appendWhole } from "../store/append-whole.js";
import { appendEvent, type EventBody, type RunEvent } from "../store/event-log.js";
import { appendProgress, type ProgressBlock } from "../store/progress-log.js";
import type { RunPaths } from "../store/run-paths.js";
import { writeStatusFile, type RunStatus } from "../store/status-file.js";
import { WriteGuard } from "../store/write-guard.js";

/** Receives the run's event stream and log lines as they are recorded (the terminal renderer, for one). */
export interface RecordListener {
  event(event: RunEvent): void;
  log(line: string): void;
}

/** One thing to record: a log line, an event, or a progress.txt block. */
export type RecordEntry =
  { kind: "log"; line: string } | { kind: "event"; body: EventBody } | { kind: "progress"; block: ProgressBlock };

/**
 * While a run goes from iteration to iteration fast (an agent that ends at once), status.json is replaced
 * at most once in this many ms, and a change waits at most this long: each replace costs about a
 * millisecond on ext4, which writes the new file out when a rename replaces a file (README, Development).
 */
export const STATUS_GAP_MS = 100;

/** Writes a run's files; the one object the loop records through. */
export class RunRecord {
  /** The records of this process whose run has not been finished yet (finishRun takes each out). */
  static readonly unfinished = new Set<RunRecord>();

  private heartbeat: NodeJS.Timeout | null = null;
  /** When status.json was last replaced (performance.now()) and the state it said; the write waiting for the gap. */
  private writtenAt = -Infinity;
  private writtenState: RunStatus["state"] | null = null;
  private pendingWrite: NodeJS.Timeout | null = null;
  /** events.jsonl stays open while the run records (an agent can emit an event per output line). */
  private eventsFd: number | null = null;
  /** The times (ms) of the last event and the last run.log line written (see stamp()). */
  private lastEventMs = -Infinity;
  private lastLogMs = -Infinity;
  /** The first failed write, and the disk space kept to record the run's end. */
  readonly guard: WriteGuard;

  constructor(
    readonly paths: RunPaths,
    private current: RunStatus,
    private readonly listener: RecordListener,
    private readonly now: () => Date,
    /** Removes credentials (from this environment, and key shapes) from everything written. */
    readonly redactor: Redactor = new Redactor({}),
  ) {
    this.guard = new WriteGuard(join(paths.dir, "disk-reserve"));
    RunRecord.unfinished.add(this);
  }

  /** Creates the run directory (0700) and writes the first status. */
  static create(
    paths: RunPaths,
    status: RunStatus,
    listener: RecordListener,
    now: () => Date,
    redactor?: Redactor,
  ): RunRecord {
    mkdirSync(paths.dir, { recursive: true, mode: 0o700 });
    const record = new RunRecord(paths, status, listener, now, redactor);
    record.writeStatus();
    return record;
  }

  /** The run's status: the last written, or the one about to be (updateSoon). */
  get status(): Readonly<RunStatus> {
    return this.current;
  }

  /** Merges `patch` into status.json and replaces the file. */
  update(patch: Partial<RunStatus>): void {
    this.current = { ...this.current, ...this.redactor.deep(patch) };
    this.writeStatus();
  }

  /**
   * Merges `patch` into status.json and replaces the file, at once unless the run was running and still is:
   * then no sooner than STATUS_GAP_MS after the last replace. Any other change (a pause, a question, a wait,
   * the end) is on disk when this returns.
   */
  updateSoon(patch: Partial<RunStatus>): void {
    this.current = { ...this.current, ...this.redactor.deep(patch) };
    const wait = this.writtenAt + STATUS_GAP_MS - performance.now();
    if (this.current.state !== "running" || this.writtenState !== "running" || wait <= 0) this.writeStatus();
    else this.pendingWrite ??= setTimeout(() => this.writeStatus(), wait).unref();
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
    const { type, ...rest } = body;
    const event: RunEvent = {
      v: 1,
      ts: this.stamp("event"),
      run: this.current.run_id,
      type,
      ...this.redactor.deep(rest),
    };
    this.guard.attempt(() => {
      // The file stays open: at each event but the agent's own (one per output line), it must still be the
      // file at events.jsonl, or an agent that swapped it for a link would be writing into the void.
      if (this.eventsFd !== null && type !== "agent_event") checkStillAt(this.eventsFd, this.paths.events);
      this.eventsFd ??= openAppend(this.paths.events);
      appendEvent(this.eventsFd, event);
    });
    this.listener.event(event);
  }

  /** Appends a human-readable line to run.log and passes it on. */
  log(line: string): void {
    const shown = this.redactor.text(line);
    this.guard.attempt(() => appendWhole(this.paths.log, `${this.stamp("log")} ${shown}\n`));
    this.listener.log(shown);
  }

  /** Appends a key=value block to progress.txt. */
  progress(block: ProgressBlock): void {
    this.guard.attempt(() => appendProgress(this.paths.progress, this.redactor.deep(block)));
  }

  /**
   * Refreshes `updated_at` every `intervalMs` so readers can tell a live runner from a dead one.
   * The timer is deliberately ref'd: until finishRun stops it, the process cannot fall out of its
   * event loop and exit without recording how the run ended.
   */
  startHeartbeat(intervalMs = 5000): void {
    this.heartbeat ??= setInterval(() => {
      this.writeStatus();
    }, intervalMs);
  }

  /** Stops the heartbeat, and a write waiting for its gap (whatever writes the status next writes all of it). */
  stopHeartbeat(): void {
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.heartbeat = null;
    this.cancelPendingWrite();
  }

  /** Writes a status waiting for its gap and closes what the record holds open (it reopens on the next event). */
  close(): void {
    if (this.pendingWrite !== null) this.writeStatus();
    if (this.eventsFd !== null) closeSync(this.eventsFd);
    this.eventsFd = null;
  }

  private writeStatus(): void {
    this.cancelPendingWrite();
    this.current = { ...this.current, updated_at: this.now().toISOString() };
    this.guard.attempt(() => writeStatusFile(this.paths.status, this.current));
    this.writtenAt = performance.now();
    this.writtenState = this.current.state;
  }

  /**
   * The time of an event or a run.log line, such that the two files merged by time (`ralph logs`, which puts
   * an event before a line of the same millisecond) give the order they were written in: an event comes
   * after the lines before it, at least a millisecond later, and neither file's times go back.
   */
  private stamp(kind: "event" | "log"): string {
    const now = this.now().getTime();
    const ms =
      kind === "event"
        ? Math.max(now, this.lastEventMs, this.lastLogMs + 1)
        : Math.max(now, this.lastLogMs, this.lastEventMs);
    if (kind === "event") this.lastEventMs = ms;
    else this.lastLogMs = ms;
    return new Date(ms).toISOString();
  }

  private cancelPendingWrite(): void {
    if (this.pendingWrite !== null) clearTimeout(this.pendingWrite);
    this.pendingWrite = null;
  }
}

/** Throws a RunFileError when `path` no longer names the file open as `fd` (replaced, by a link or otherwise). */
function checkStillAt(fd: number, path: string): void {
  const open = fstatSync(fd);
  let now: Stats | null;
  try {
    now = lstatSync(path);
  } catch {
    now = null;
  }
  if (now && now.ino === open.ino && now.dev === open.dev) return;
  const what = now === null ? "removed" : now.isSymbolicLink() ? "replaced by a symbolic link" : "replaced";
  throw new RunFileError(`${path}: ${what} while the run was recording to it`);
}
