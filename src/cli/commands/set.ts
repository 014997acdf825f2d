// `ralph set RUN key=value...`: a person changes a run's desired state, live or not, through the runner.
import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import { applyStateChanges, describeStateChanges, parseStateChanges } from "../../config/state-changes.js";
import { readProcess } from "../../process/proc-table.js";
import { isRunnerAlive } from "../../control/runner-alive.js";
import { summariseRun } from "../../control/list-runs.js";
import { acquireLock } from "../../control/lock-file.js";
import { runPaths } from "../../store/run-paths.js";
import { takeSetResult, withdrawSetRequest, writeSetRequest } from "../../control/set-request.js";
import { readPlanFile, writePlanFile } from "../../store/plan-file.js";
import { foreignRefusal } from "../../control/control-request.js";
import { forPeopleOnly } from "../for-people.js";
import { pickRun } from "../pick-run.js";
import { UsageError } from "../usage-error.js";

/** How long `ralph set` waits for a live runner's answer. */
const ANSWER_TIMEOUT_MS = 15_000;

/** `ralph set RUN key=value...`: validated first; applied by the runner when the run is live, else written directly. */
export async function setCommand(
  projectDir: string,
  given: string | undefined,
  words: string[],
  env: NodeJS.ProcessEnv,
): Promise<number> {
  forPeopleOnly("set", env);
  if (words.length === 0) throw new UsageError("nothing to set: ralph set [RUN] key=value... (e.g. max_iterations=4)");
  const parsed = parseStateChanges(words);
  if (!parsed.ok) throw new UsageError(parsed.message);
  const id = pickRun(projectDir, given, "set");
  const paths = runPaths(projectDir, id);
  const { summary } = summariseRun(projectDir, id, isRunnerAlive, new Date());
  const foreign = foreignRefusal(summary, "set");
  if (foreign) throw new UsageError(foreign);
  if (summary.mode === "hook")
    throw new UsageError(`run ${id} is an in-session loop; change it in .claude/ralph-loop.local.md`);
  const pidStart = readProcess(process.pid)?.startTime ?? null;
  if (!summary.active) {
    const holder = {
      pid: process.pid,
      pid_start: pidStart,
      hostname: hostname(),
      run_id: id,
      acquired_at: new Date().toISOString(),
    };
    const lock = acquireLock(paths.lock, holder, isRunnerAlive);
    if (lock.ok) {
      try {
        const read = readPlanFile(paths.state);
        if (!read.ok) throw new UsageError(read.message);
        writePlanFile(paths.state, applyStateChanges(read.plan, parsed.changes));
      } finally {
        lock.release();
      }
      process.stdout.write(
        `run ${id}: set ${describeStateChanges(parsed.changes)} (takes effect when it is continued)\n`,
      );
      return 0;
    }
  }
  // A live run: the runner applies the change, so that it is not mistaken for an edit made by its agent.
  const name = writeSetRequest(
    paths.requests,
    { words, pid: process.pid, pid_start: pidStart },
    randomBytes(6).toString("hex"),
  );
  const deadline = Date.now() + ANSWER_TIMEOUT_MS;
  for (;;) {
    const result = takeSetResult(paths.requests, name);
    if (result) {
      if (!result.ok) throw new UsageError(`run ${id}: ${result.message}`);
      process.stdout.write(`run ${id}: ${result.message}\n`);
      return 0;
    }
    if (Date.now() > deadline || !summariseRun(projectDir, id, isRunnerAlive, new Date()).summary.active) {
      withdrawSetRequest(paths.requests, name);
      if (takeSetResult(paths.requests, name)) continue;
      throw new UsageError(`run ${id}: its runner did not take the change (it may have ended); nothing was changed`);
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
