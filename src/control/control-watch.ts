// Notices changes to a run directory's control files (PAUSE, STOP, ANSWER, state.md, `ralph set` requests),
// by file watch with a polling fallback.
import { mkdirSync, rmSync, watch, type FSWatcher } from "node:fs";
import { entryKind } from "../store/regular-file.js";
import type { RunPaths } from "../store/run-paths.js";
import { isSetRequestName } from "./set-request.js";

/** Names in the run directory whose changes are requests to the runner. */
const WATCHED_NAMES = new Set(["STOP", "PAUSE", "ANSWER", "state.md"]);

/** Fallback poll period, for filesystems where watching misses events. */
export const FALLBACK_POLL_MS = 250;

/** Calls `onChange` when a control file may have changed (and at every fallback poll) until closed. */
export function watchControl(paths: RunPaths, onChange: () => void): { close(): void } {
  makeRequestsDirectory(paths.requests);
  const watchers: FSWatcher[] = [];
  // The runner's own writes (logs, events, status) change the run directory constantly: react only to
  // the files a user or `ralph stop|pause|resume|set` touches.
  const names: Array<[string, (name: string) => boolean]> = [
    [paths.dir, (name) => WATCHED_NAMES.has(name)],
    [paths.requests, isSetRequestName],
  ];
  for (const [dir, watched] of names) {
    try {
      const watcher = watch(dir, { persistent: false }, (_event, name) => {
        if (name === null || watched(String(name))) onChange();
      });
      watcher.on("error", () => undefined);
      watchers.push(watcher);
    } catch {
      // the poll below still looks
    }
  }
  // Ref'd on purpose: while the engine waits (paused, a usage limit) this is what keeps the process alive.
  const poll = setInterval(onChange, FALLBACK_POLL_MS);
  return {
    close() {
      for (const watcher of watchers) watcher.close();
      clearInterval(poll);
    },
  };
}

/** Makes the run's requests directory (0700), replacing anything else found under its name (a link, say). */
function makeRequestsDirectory(dir: string): void {
  const kind = entryKind(dir);
  if (kind === "directory") return;
  try {
    if (kind !== "missing") rmSync(dir, { force: true });
    mkdirSync(dir, { mode: 0o700 });
  } catch {
    // `ralph set` makes it too; until then there is nothing to watch there
  }
}
