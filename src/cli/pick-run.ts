// Finds the run a command is about: the one named, or the single active run of the project.
import { isRunnerAlive } from "../control/runner-alive.js";
import { listRunRecords, runIds, type RunRecord } from "../control/list-runs.js";
import { runDirProblem } from "../store/run-paths.js";
import { parseRunId } from "../util/parse-value.js";
import { UsageError } from "./usage-error.js";

/**
 * The id of the run named by `given`, or of the only active run (or, with `orLatest`, of the most recently
 * started run when none is active); a UsageError otherwise.
 */
export function pickRun(projectDir: string, given: string | undefined, what: string, orLatest = false): string {
  return pickRunRecord(projectDir, given, what, orLatest).id;
}

/** pickRun's run, with the summary and status picking it read (null for a named run: none was read). */
export function pickRunRecord(
  projectDir: string,
  given: string | undefined,
  what: string,
  orLatest = false,
): { id: string; record: RunRecord | null } {
  const problem = runDirProblem(projectDir, given !== undefined && parseRunId(given).ok ? given : undefined);
  if (problem) throw new UsageError(problem);
  if (given !== undefined) {
    if (!parseRunId(given).ok || !runIds(projectDir).includes(given))
      throw new UsageError(`RUN ${given}: no such run in .ralph/runs (see ralph list)`);
    return { id: given, record: null };
  }
  const all = listRunRecords(projectDir, isRunnerAlive, new Date());
  // A --parallel parent stands for its children: they are never picked in its place.
  // A run directory ralph did not create is never picked: only named.
  const runs = all.filter(
    ({ summary: run }) =>
      run.state !== "foreign" && (run.parent === null || !all.some(({ summary: other }) => other.id === run.parent)),
  );
  const active = runs.filter((record) => record.summary.active);
  const only = active.length === 1 ? active[0] : undefined;
  if (only) return { id: only.summary.id, record: only };
  // The most recently started run, whatever its name (a `--name` run must not hide newer ones).
  const latest = orLatest ? runs.at(-1) : undefined;
  if (active.length === 0 && latest !== undefined) return { id: latest.summary.id, record: latest };
  if (runs.length === 0)
    throw new UsageError(
      `no runs yet in .ralph/runs: nothing to ${what} (start one with ralph run, or try ralph demo)`,
    );
  if (active.length === 0) throw new UsageError(`no active run to ${what}; name one (see ralph list)`);
  throw new UsageError(
    `${active.length} active runs, name the one to ${what}: ${active.map((record) => record.summary.id).join(", ")}`,
  );
}
