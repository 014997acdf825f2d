// The control files of a run (SPEC section 4): what `ralph stop`, `pause` and `resume` and the dashboard change.
import { existsSync, unlinkSync, writeFileSync } from "node:fs";
import type { RunPaths } from "./run-paths.js";

/** Creates STOP: the run ends at the next boundary, or with `now` the runner ends the agent at once. */
export function requestStop(paths: RunPaths, now: boolean): void {
  writeFileSync(paths.stop, now ? "now\n" : "stop\n", { mode: 0o600 });
}

/** Creates PAUSE: the run waits before its next iteration. */
export function requestPause(paths: RunPaths): void {
  writeFileSync(paths.pause, "pause\n", { mode: 0o600 });
}

/** Removes PAUSE. */
export function clearPause(paths: RunPaths): void {
  if (existsSync(paths.pause)) unlinkSync(paths.pause);
}
