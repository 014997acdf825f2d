// After an agent iteration with `--commit iteration`: commit what it changed on the run's branch.
import type { RunRecord } from "../run/run-record.js";
import type { EngineIo } from "./engine-io.js";
import type { AgentRun, Attempt, CommitRecord } from "./phase.js";
import { workDirOf, type EngineOptions } from "./engine-options.js";

/**
 * The agent run with what was committed for it. Runs only once the agent's tree has ended (so nothing is
 * still writing) and before the checks, so they judge what the branch holds. After a signal nothing is
 * committed: the runner must end quickly, and the next iteration of `ralph continue` commits what was left.
 */
export async function commitChanges(
  options: EngineOptions,
  io: EngineIo,
  record: RunRecord,
  attempt: Attempt,
  run: AgentRun,
  signal?: AbortSignal,
): Promise<AgentRun> {
  if (!options.commit || !io.commitIteration || run.kind !== "finished" || io.signals.interrupted.aborted) return run;
  const outcome = await io.commitIteration({
    dir: workDirOf(options),
    runId: options.runId,
    iteration: attempt.iteration,
    task: attempt.task,
    ...(signal ? { signal } : {}),
  });
  let commit: CommitRecord;
  if (!outcome.ok) {
    commit = { error: outcome.message };
    record.log(`iteration ${attempt.iteration}: nothing was committed: ${outcome.message}`);
  } else if (outcome.commit === null) {
    commit = null;
    record.log(`iteration ${attempt.iteration}: no changes left to commit`);
  } else {
    commit = { sha: outcome.commit, files: outcome.files };
    record.log(
      `iteration ${attempt.iteration}: committed ${outcome.files} file(s) as ${outcome.commit.slice(0, 12)}${options.worktree ? ` on ${options.worktree.branch}` : ""}`,
    );
  }
  return { ...run, commit };
}
