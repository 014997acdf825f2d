// `ralph stop`, `pause` and `resume`: they only create or remove the sentinel files of a run.
import { isRunnerAlive } from "../../control/runner-alive.js";
import { summariseRun } from "../../control/list-runs.js";
import { clearPause, requestPause, requestStop } from "../../control/control-files.js";
import { entryKind } from "../../store/regular-file.js";
import { runPaths } from "../../store/run-paths.js";
import { pickRun } from "../pick-run.js";
import { UsageError } from "../usage-error.js";
import type { RunSummary } from "../../store/run-summary.js";

/** The run's summary, or a UsageError when it is not live: a sentinel for an ended run would do nothing. */
function liveRun(projectDir: string, id: string, what: string): RunSummary {
  const { summary } = summariseRun(projectDir, id, isRunnerAlive, new Date());
  if (summary.active) return summary;
  if (summary.state === "stale") {
    throw new UsageError(`run ${id} is not running (its runner is gone); nothing to ${what}. Go on with it: ralph continue ${id}`);
  }
  throw new UsageError(`run ${id} has already ended (${summary.state}); nothing to ${what}. Go on with it: ralph continue ${id}`);
}

/** `ralph stop [RUN] [--now]`: STOP ends the run at the next boundary; with --now the runner ends the agent at once. */
export async function stopCommand(projectDir: string, given: string | undefined, now: boolean): Promise<number> {
  const id = pickRun(projectDir, given, "stop");
  liveRun(projectDir, id, "stop");
  requestStop(runPaths(projectDir, id), now);
  if (!now) {
    process.stdout.write(`stop requested: run ${id} ends at the next iteration boundary\n`);
    return 0;
  }
  process.stdout.write(`stop --now requested: ending run ${id} and its agent\n`);
  const deadline = Date.now() + 60_000;
  for (;;) {
    const { summary } = summariseRun(projectDir, id, isRunnerAlive, new Date());
    if (!summary.active) {
      process.stdout.write(`run ${id}: ${summary.state}\n`);
      return 0;
    }
    if (Date.now() > deadline) {
      process.stdout.write(`run ${id} is still ending; check it with ralph status ${id}\n`);
      return 0;
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** `ralph pause [RUN]`: the run waits before its next iteration until resumed. */
export async function pauseCommand(projectDir: string, given: string | undefined): Promise<number> {
  const id = pickRun(projectDir, given, "pause");
  liveRun(projectDir, id, "pause");
  const paths = runPaths(projectDir, id);
  // Only a regular PAUSE file is a pause already asked for; anything else there (a planted link) is replaced.
  if (entryKind(paths.pause) === "file") throw new UsageError(`run ${id} is already paused (or pausing); ralph resume ${id} to go on`);
  requestPause(paths);
  process.stdout.write(`pause requested: run ${id} waits before its next iteration (ralph resume ${id} to go on)\n`);
  return 0;
}

/** `ralph resume [RUN]`: removes PAUSE. */
export async function resumeCommand(projectDir: string, given: string | undefined): Promise<number> {
  const id = pickRun(projectDir, given, "resume");
  liveRun(projectDir, id, "resume");
  const paths = runPaths(projectDir, id);
  if (entryKind(paths.pause) === "missing") throw new UsageError(`run ${id} is not paused; nothing to resume`);
  clearPause(paths);
  process.stdout.write(`run ${id} resumed\n`);
  return 0;
}
