// Notices changes to a run directory's control files (PAUSE, STOP, ANSWER, state.md), by file watch with a polling fallback.
import { watch, type FSWatcher } from "node:fs";
import type { RunPaths } from "../store/run-paths.js";
import { isSetRequestName } from "./set-request.js";


/** Names in the run directory whose changes are requests to the runner. */
const WATCHED_NAMES = new Set(["STOP", "PAUSE", "ANSWER", "state.md"]);

/** Fallback poll period, for filesystems where watching misses events. */
export const FALLBACK_POLL_MS = 250;

/** Calls `onChange` when a control file may have changed (and at every fallback poll) until closed. */
export function watchControl(paths: RunPaths, onChange: () => void): { close(): void } {
  let watcher: FSWatcher | null = null;
  try {
    // The runner's own writes (logs, events, status) change this directory constantly: react only to
    // the files a user or `ralph stop|pause|resume` touches.
    watcher = watch(paths.dir, { persistent: false }, (_event, name) => {
      if (name === null || WATCHED_NAMES.has(String(name)) || isSetRequestName(String(name))) onChange();
    });
    watcher.on("error", () => undefined);
  } catch {
    watcher = null;
  }
  // Ref'd on purpose: while the engine waits (paused, a usage limit) this is what keeps the process alive.
  const poll = setInterval(onChange, FALLBACK_POLL_MS);
  return {
    close() {
      watcher?.close();
      clearInterval(poll);
    },
  };
}
