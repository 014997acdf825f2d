// `ralph continue RUN`: go on with a finished, stopped or crashed run, keeping its counters, spend and history.
import { existsSync, readFileSync, renameSync } from "node:fs";
import type { Command } from "commander";
import type { RunSettings } from "../../config/run-options.js";
import { parseSavedSettings } from "../../config/saved-settings.js";
import { isRunnerAlive } from "../../process/runner-alive.js";
import { summariseRun } from "../../store/list-runs.js";
import { runPaths } from "../../store/run-paths.js";
import { readPlanFile, writePlanFile } from "../../store/plan-file.js";
import { pickRun } from "../pick-run.js";
import { startRun } from "../start-run.js";
import { UsageError } from "../usage-error.js";
import { parseCount } from "../../config/parse-value.js";

function savedSettings(file: string): RunSettings {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch {
    throw new UsageError(`${file}: cannot be read; this run cannot be continued`);
  }
  const parsed = parseSavedSettings(text, file);
  if (!parsed.ok) throw new UsageError(`${parsed.message}; this run cannot be continued`);
  return parsed.settings;
}

/** Continues run `given`; `-n` raises its cap, `--json`/`--live` choose the output. */
export async function continueCommand(projectDir: string, given: string, command: Command): Promise<number> {
  const id = pickRun(projectDir, given, "continue");
  const paths = runPaths(projectDir, id);
  const { summary, status } = summariseRun(projectDir, id, isRunnerAlive, new Date());
  if (summary.active) throw new UsageError(`run ${id} is live (pid ${summary.pid ?? "?"}); stop it first with ralph stop ${id}`);
  if (!status) throw new UsageError(`run ${id} has no readable status.json; it cannot be continued`);
  if (status.mode === "hook") throw new UsageError(`run ${id} is an in-session loop; start a new one in Claude Code with ralph hook start`);
  const opts = command.opts<{ maxIterations?: string; json?: boolean; live?: boolean }>();
  let maxIterations: number | null = null;
  if (opts.maxIterations !== undefined) {
    const parsed = parseCount(opts.maxIterations);
    if (!parsed.ok) throw new UsageError(`--max-iterations: expected ${parsed.expected}, got ${JSON.stringify(opts.maxIterations)}`);
    maxIterations = parsed.value;
  }
  const read = readPlanFile(paths.state);
  if (!read.ok) throw new UsageError(read.message);
  const settings = { ...savedSettings(paths.settings), json: opts.json === true, live: opts.live === true, name: id };
  const plan = { ...read.plan, active: true, maxIterations: maxIterations ?? read.plan.maxIterations };
  // Only once the run's lock is held: a refused continue changes nothing.
  const prepare = () => {
    if (existsSync(paths.stop)) renameSync(paths.stop, `${paths.stop}.${new Date().toISOString().replace(/[:.]/g, "-")}`);
    writePlanFile(paths.state, plan);
  };
  return startRun({ projectDir, runId: id, settings, plan, previous: status, projectLock: false, prepare });
}
