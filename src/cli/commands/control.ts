// `ralph stop`, `pause` and `resume`: they only create or remove the sentinel files of a run.
import { unlinkSync } from "node:fs";
import { entryKind } from "../../store/regular-file.js";
import { writeFileAtomic } from "../../store/atomic-write.js";
import { isRunnerAlive } from "../../process/runner-alive.js";
import { summariseRun } from "../../store/list-runs.js";
import { runPaths } from "../../store/run-paths.js";
import { pickRun } from "../pick-run.js";

/** `ralph stop [RUN] [--now]`: STOP ends the run at the next boundary; with --now the runner ends the agent at once. */
export async function stopCommand(projectDir: string, given: string | undefined, now: boolean): Promise<number> {
  const id = pickRun(projectDir, given, "stop");
  // Replaced, never written through: a STOP or PAUSE that is a link is swapped for a file, its target untouched.
  writeFileAtomic(runPaths(projectDir, id).stop, now ? "now\n" : "stop\n", 0o600, false);
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
  writeFileAtomic(runPaths(projectDir, id).pause, "pause\n", 0o600, false);
  process.stdout.write(`pause requested: run ${id} waits before its next iteration (ralph resume ${id} to go on)\n`);
  return 0;
}

/** `ralph resume [RUN]`: removes PAUSE. */
export async function resumeCommand(projectDir: string, given: string | undefined): Promise<number> {
  const id = pickRun(projectDir, given, "resume");
  const file = runPaths(projectDir, id).pause;
  if (entryKind(file) !== "missing") unlinkSync(file);
  process.stdout.write(`run ${id} resumed\n`);
  return 0;
}
