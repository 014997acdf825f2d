// A person's stop, pause and resume of a run: what `ralph stop|pause|resume` and the dashboard's buttons do.
// Both call requestControl, so they refuse the same things with the same words.
import { entryKind } from "../store/regular-file.js";
import { runPaths } from "../store/run-paths.js";
import type { RunSummary } from "../store/run-summary.js";
import { clearPause, requestPause, requestStop } from "./control-files.js";
import { summariseRun } from "./list-runs.js";
import { isRunnerAlive } from "./runner-alive.js";
import { FOREIGN_SHORT } from "./foreign-run.js";

/** A request on a live run's control files. */
export type ControlAction = "stop" | "stop-now" | "pause" | "resume";

/** What was done (the line to show), or why nothing was (the line to refuse with). */
export type ControlOutcome = { ok: true; message: string } | { ok: false; message: string };

/** Why a request on run `id` is refused because the run is not live, or null when it is live. */
export function notLiveRefusal(summary: RunSummary, what: string): string | null {
  if (summary.active) return null;
  const id = summary.id;
  const foreign = foreignRefusal(summary, what);
  if (foreign) return foreign;
  if (summary.state === "stale")
    return `run ${id} is not running (its runner is gone); nothing to ${what}. Go on with it: ralph continue ${id}`;
  return `run ${id} has already ended (${summary.state}); nothing to ${what}. Go on with it: ralph continue ${id}`;
}

/** Why nothing is done to a run directory ralph did not create, or null when it did. */
export function foreignRefusal(summary: RunSummary, what: string): string | null {
  return summary.state === "foreign"
    ? `run ${summary.id} is foreign: ${FOREIGN_SHORT}; nothing to ${what} (run ralph with the HOME or XDG_STATE_HOME it was started with)`
    : null;
}

/** The word a refusal uses for an action ("stop" for both stops). */
function verbOf(action: ControlAction): string {
  return action === "stop-now" ? "stop" : action;
}

/**
 * Why `action` on a run is refused, or null when it would be carried out: the one table of preconditions
 * that requestControl applies and that the terminal UI shows its keys by (a key that does not apply is shown
 * disabled with this line). `pause` is what is at the run's PAUSE path.
 */
export function controlRefusal(
  summary: RunSummary,
  pause: ReturnType<typeof entryKind>,
  action: ControlAction,
): string | null {
  const notLive = notLiveRefusal(summary, verbOf(action));
  if (notLive) return notLive;
  const id = summary.id;
  // Only a regular PAUSE file is a pause already asked for; anything else there (a planted link) is replaced.
  if (action === "pause" && pause === "file")
    return `run ${id} is already paused (or pausing); ralph resume ${id} to go on`;
  if (action === "resume" && pause === "missing") return `run ${id} is not paused; nothing to resume`;
  return null;
}

/** Checks and carries out `action` on run `id` of `projectDir`; changes nothing when refused. */
export function requestControl(projectDir: string, id: string, action: ControlAction): ControlOutcome {
  const { summary } = summariseRun(projectDir, id, isRunnerAlive, new Date());
  const refusal = controlRefusal(summary, entryKind(runPaths(projectDir, id).pause), action);
  if (refusal) return { ok: false, message: refusal };
  const paths = runPaths(projectDir, id);
  switch (action) {
    case "stop":
      requestStop(paths, false);
      return { ok: true, message: `stop requested: run ${id} ends at the next iteration boundary` };
    case "stop-now":
      requestStop(paths, true);
      return { ok: true, message: `stop --now requested: ending run ${id} and its agent` };
    case "pause":
      requestPause(paths);
      return {
        ok: true,
        message: `pause requested: run ${id} waits before its next iteration (ralph resume ${id} to go on)`,
      };
    case "resume":
      clearPause(paths);
      return { ok: true, message: `run ${id} resumed` };
    default: {
      const never: never = action;
      return { ok: false, message: `unknown request ${String(never)}` };
    }
  }
}
