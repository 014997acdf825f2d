// Watches a run directory for the PAUSE and STOP sentinels and state.md edits, by file watch with a polling fallback.
import { watch, type FSWatcher } from "node:fs";
import { entryKind, readRegular } from "../store/regular-file.js";
import type { RunPaths } from "../store/run-paths.js";
import { isSetRequestName } from "../store/set-request.js";

/** Names in the run directory whose changes are requests to the runner. */
const WATCHED_NAMES = new Set(["STOP", "PAUSE", "state.md"]);

/** Fallback poll period, for filesystems where watching misses events. */
const FALLBACK_POLL_MS = 250;

/** What the sentinels ask for right now. */
export interface SentinelState {
  stop: boolean;
  stopNow: boolean;
  pause: boolean;
}

/**
 * Reads the sentinels (cheap: two lstats and, when STOP exists, one small read). Presence is the request,
 * whatever the entry is; only a regular STOP file is read (a FIFO there must not block the runner).
 */
export function readSentinels(paths: RunPaths): SentinelState {
  const stop = entryKind(paths.stop) !== "missing";
  let stopNow = false;
  if (stop) {
    try {
      stopNow = /^\s*now\b/m.test(readRegular(paths.stop, 4096).toString("utf8"));
    } catch {
      stopNow = false;
    }
  }
  return { stop, stopNow, pause: entryKind(paths.pause) !== "missing" };
}

/** Notices changes in the run directory and turns `STOP` with `now` into an abort. */
export class ControlWatch {
  private watcher: FSWatcher | null = null;
  private poll: NodeJS.Timeout | null = null;
  private waiters: Array<() => void> = [];
  private readonly stopNowController = new AbortController();
  /** Called on every change (and fallback poll), e.g. to serve `ralph set` requests. */
  onChange: (() => void) | null = null;

  constructor(private readonly paths: RunPaths) {}

  /** Aborted once `ralph stop --now` (a STOP file saying `now`) is seen. */
  get stopNow(): AbortSignal {
    return this.stopNowController.signal;
  }

  /** Starts watching. */
  start(): void {
    try {
      // The runner's own writes (logs, events, status) change this directory constantly: react only to
      // the files a user or `ralph stop|pause|resume` touches.
      this.watcher = watch(this.paths.dir, { persistent: false }, (_event, name) => {
        if (name === null || WATCHED_NAMES.has(String(name)) || isSetRequestName(String(name))) this.changed();
      });
      this.watcher.on("error", () => undefined);
    } catch {
      this.watcher = null;
    }
    this.poll = setInterval(() => this.changed(), FALLBACK_POLL_MS);
    this.poll.unref();
    this.changed();
  }

  /** Resolves on the next change in the run directory (or the next fallback poll), or when `signal` aborts. */
  nextChange(signal?: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      // This timer is also what keeps the process alive while it waits: the watcher and poll are unref'd.
      const fallback = setTimeout(() => done(), FALLBACK_POLL_MS);
      const done = () => {
        clearTimeout(fallback);
        signal?.removeEventListener("abort", done);
        resolve();
      };
      this.waiters.push(done);
      signal?.addEventListener("abort", done, { once: true });
    });
  }

  /** Stops watching and releases every waiter. */
  close(): void {
    this.watcher?.close();
    if (this.poll) clearInterval(this.poll);
    this.changed();
  }

  private changed(): void {
    try {
      this.onChange?.();
    } catch {
      // A request that cannot be served now is retried on the next change or poll.
    }
    if (!this.stopNowController.signal.aborted && readSentinels(this.paths).stopNow) this.stopNowController.abort("stop --now");
    const waiters = this.waiters;
    this.waiters = [];
    for (const waiter of waiters) waiter();
  }
}
