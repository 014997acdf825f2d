// The control files of a run: what `ralph stop`, `pause` and `resume` and the dashboard change.
// Sentinels are replaced, never written through: a STOP or PAUSE that is a link is swapped for a file,
// its target untouched.
import { unlinkSync } from "node:fs";
import { writeFileAtomic } from "./atomic-write.js";
import { entryKind } from "./regular-file.js";
import type { RunPaths } from "./run-paths.js";

/** Creates STOP: the run ends at the next boundary, or with `now` the runner ends the agent at once. */
export function requestStop(paths: RunPaths, now: boolean): void {
  writeFileAtomic(paths.stop, now ? "now\n" : "stop\n", 0o600, false);
}

/** Creates PAUSE: the run waits before its next iteration. */
export function requestPause(paths: RunPaths): void {
  writeFileAtomic(paths.pause, "pause\n", 0o600, false);
}

/** Removes PAUSE, whatever kind of entry it is. */
export function clearPause(paths: RunPaths): void {
  if (entryKind(paths.pause) !== "missing") unlinkSync(paths.pause);
}
