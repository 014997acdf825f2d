// `ralph continue RUN`: go on with a finished, stopped or crashed run, keeping its counters, spend and history.
import { readRegular } from "../../store/regular-file.js";
import type { Command } from "commander";
import type { RunSettings } from "../../config/run-options.js";
import { parseSavedSettings } from "../../config/saved-settings.js";
import { isRunnerAlive } from "../../control/runner-alive.js";
import { summariseRun } from "../../control/list-runs.js";
import { runPaths, type RunPaths } from "../../store/run-paths.js";
import type { RunStatus } from "../../store/status-file.js";
import type { Plan } from "../../store/plan-file.js";
import { removeLeftoverViews } from "../../sandbox/run-view.js";
import { removeLeftoverTemps } from "../../store/create-run-dir.js";
import { readPlanFile, writePlanFile } from "../../store/plan-file.js";
import { archiveStop, clearAnswer } from "../../control/control-files.js";
import { continueRefusal } from "../../control/verify-run.js";
import { forPeopleOnly } from "../for-people.js";
import { pickRun } from "../pick-run.js";
import { startRun } from "../../launch/start-run.js";
import { launchWords } from "../launch-words.js";
import { UsageError } from "../usage-error.js";
import { spendOf } from "../../spend/spend-of.js";
import { parsedSetting } from "../parsed-option.js";

function savedSettings(file: string): RunSettings {
  let text: string;
  try {
    text = readRegular(file, 1024 * 1024).toString("utf8");
  } catch {
    throw new UsageError(`${file}: cannot be read; this run cannot be continued`);
  }
  const parsed = parseSavedSettings(text, file);
  if (!parsed.ok) throw new UsageError(`${parsed.message}; this run cannot be continued`);
  return parsed.settings;
}

/** Continues run `given`; `-n` raises its cap, `--json`/`--live` choose the output. */
export async function continueCommand(
  projectDir: string,
  given: string | undefined,
  command: Command,
): Promise<number> {
  forPeopleOnly("continue");
  const id = pickRun(projectDir, given, "continue", true);
  const paths = runPaths(projectDir, id);
  const { summary, status } = summariseRun(projectDir, id, isRunnerAlive, new Date());
  if (summary.active)
    throw new UsageError(`run ${id} is live (pid ${summary.pid ?? "?"}); stop it first with ralph stop ${id}`);
  const untrusted = continueRefusal(id, paths);
  if (untrusted !== null) throw new UsageError(untrusted);
  if (!status) throw new UsageError(`run ${id} has no readable status.json; it cannot be continued`);
  if (status.mode === "hook")
    throw new UsageError(`run ${id} is an in-session loop; start a new one in Claude Code with ralph hook start`);
  const opts = command.opts<{
    maxIterations?: string;
    maxCost?: string;
    maxRuntime?: string;
    json?: boolean;
    live?: boolean;
  }>();
  const maxIterations = opts.maxIterations === undefined ? null : parsedSetting("maxIterations", opts.maxIterations);
  const read = readPlanFile(paths.state);
  if (!read.ok) throw new UsageError(read.message);
  const settings = { ...savedSettings(paths.settings), json: opts.json === true, live: opts.live === true, name: id };
  if (opts.maxCost !== undefined) settings.maxCostUsd = parsedSetting("maxCostUsd", opts.maxCost);
  if (opts.maxRuntime !== undefined) settings.maxRuntimeMs = parsedSetting("maxRuntimeMs", opts.maxRuntime);
  const plan = { ...read.plan, active: true, maxIterations: maxIterations ?? read.plan.maxIterations };
  // A --parallel parent counts child runs started, not iterations: its cap applies to each child.
  if (settings.parallel === null && plan.maxIterations !== 0 && status.iteration >= plan.maxIterations) {
    // Starting would end at once with MAX_ITERATIONS: say so instead, and how to go on.
    const more = status.iteration + Math.max(read.plan.maxIterations, 1);
    throw new UsageError(
      `run ${id} has used ${status.iteration} of its ${plan.maxIterations} iterations; nothing to continue. Raise the cap: ralph continue ${id} -n ${more}`,
    );
  }
  // What it spent is the spend ledger's figure (status.json is in reach of its agent); a run from before the ledger: status.json's.
  const ledger = spendOf(projectDir, id);
  const spent = ledger.calls > 0 ? (ledger.cost_usd ?? 0) : status.cost_usd;
  if (settings.maxCostUsd !== null && spent >= settings.maxCostUsd) {
    throw new UsageError(
      `run ${id} has spent $${spent.toFixed(4)} of its $${settings.maxCostUsd} budget; nothing to continue. Raise it: ralph continue ${id} --max-cost USD`,
    );
  }
  // Only once the run's lock is held: a refused continue changes nothing.
  const prepare = () => prepareContinue(paths, status, plan);
  return startRun(
    { projectDir, runId: id, settings, plan, previous: status, projectLock: false, prepare },
    launchWords,
  );
}

/**
 * What `ralph continue` changes in the run directory once it holds the run's lock, before its runner is named
 * in the run's record: an old STOP is moved aside, so that a stop asked of this runner is never moved with it.
 */
export function prepareContinue(paths: RunPaths, status: RunStatus, plan: Plan): void {
  removeLeftoverTemps(paths.dir);
  removeLeftoverViews(paths.dir);
  archiveStop(paths, new Date());
  // An answer the runner already took (status.json holds it) must not answer the next question too.
  if (status.answer) clearAnswer(paths);
  writePlanFile(paths.state, plan);
}
