// Finds the run a command is about: the one named, or the single active run of the project.
import { isRunnerAlive } from "../control/runner-alive.js";
import { listRuns, runIds } from "../control/list-runs.js";
import { runDirProblem } from "../store/run-paths.js";
import { parseRunId } from "../util/parse-value.js";
import { UsageError } from "./usage-error.js";

/**
 * The id of the run named by `given`, or of the only active run (or, with `orLatest`, of the most recently
 * started run when none is active); a UsageError otherwise.
 */
export function pickRun(projectDir: string, given: string | undefined, what: string, orLatest = false): string {
  const problem = runDirProblem(projectDir, given !== undefined && parseRunId(given).ok ? given : undefined);
  if (problem) throw new UsageError(problem);
  if (given !== undefined) {
    if (!parseRunId(given).ok || !runIds(projectDir).includes(given)) throw new UsageError(`RUN ${given}: no such run in .ralph/runs (see ralph list)`);
    return given;
  }
  const all = listRuns(projectDir, isRunnerAlive, new Date());
  // A --parallel parent stands for its children: they are never picked in its place.
  // A run directory ralph did not create is never picked: only named.
  const runs = all.filter((run) => run.state !== "foreign" && (run.parent === null || !all.some((other) => other.id === run.parent)));
  const active = runs.filter((run) => run.active);
  if (active.length === 1) return (active[0] as { id: string }).id;
  // The most recently started run, whatever its name (a `--name` run must not hide newer ones).
  const latest = orLatest ? runs.at(-1)?.id : undefined;
  if (active.length === 0 && latest !== undefined) return latest;
  if (active.length === 0) throw new UsageError(`no active run to ${what}; name one (see ralph list)`);
  throw new UsageError(`${active.length} active runs, name the one to ${what}: ${active.map((run) => run.id).join(", ")}`);
}
