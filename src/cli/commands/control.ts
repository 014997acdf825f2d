// `ralph stop`, `pause` and `resume`: they only create or remove the sentinel files of a run (through the
// same requestControl as the dashboard's buttons).
import { isRunnerAlive } from "../../control/runner-alive.js";
import { summariseRun } from "../../control/list-runs.js";
import { requestControl, type ControlAction } from "../../control/control-request.js";
import { forPeopleOnly } from "../for-people.js";
import { pickRun } from "../pick-run.js";
import { UsageError } from "../usage-error.js";

/** Carries out `action` on the run meant, printing what was done; a refusal is a UsageError. */
function control(projectDir: string, given: string | undefined, action: ControlAction): string {
  forPeopleOnly(action === "stop-now" ? "stop" : action);
  const id = pickRun(projectDir, given, action === "stop-now" ? "stop" : action);
  const outcome = requestControl(projectDir, id, action);
  if (!outcome.ok) throw new UsageError(outcome.message);
  process.stdout.write(`${outcome.message}\n`);
  return id;
}

/** `ralph stop [RUN] [--now]`: STOP ends the run at the next boundary; with --now the runner ends the agent at once. */
export async function stopCommand(projectDir: string, given: string | undefined, now: boolean): Promise<number> {
  const id = control(projectDir, given, now ? "stop-now" : "stop");
  if (!now) return 0;
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
  control(projectDir, given, "pause");
  return 0;
}

/** `ralph resume [RUN]`: removes PAUSE. */
export async function resumeCommand(projectDir: string, given: string | undefined): Promise<number> {
  control(projectDir, given, "resume");
  return 0;
}
