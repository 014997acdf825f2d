// A `--parallel N` run: up to N child runs at once, one per pending task, each a full `ralph run` in its own
// worktree. The parent works on its integration branch: it merges each DONE child there, and it alone decides
// which tasks are done (its own copy of the task list, never re-read from a file a child could write).
import { resolve } from "node:path";
import { MergeQueue } from "./merge-queue.js";
import { finishRun, holdMarker, type Ending, type RunResult } from "../run/finish-run.js";
import { runPaths } from "../store/run-paths.js";
import type { FanOutIo, FanOutOptions } from "./fan-out-io.js";
import { failureDetail, FanOutDriver } from "./fan-out-drive.js";
import { initialFanOut, owedMerges, spentUsd } from "./fan-out-step.js";
import { openFamilySpend, openParentRecord } from "./fan-out-record.js";

export type { FanOutOptions } from "./fan-out-io.js";

/** Runs the fan-out to its end and returns how it ended; whatever fails, the end is recorded and marked. */
export async function runFanOut(options: FanOutOptions, io: FanOutIo): Promise<RunResult> {
  const { projectDir, runId, settings, previous, integration } = options;
  const paths = runPaths(projectDir, runId);
  // Continuing: the events of the earlier starts (the merges still owed, the resolve runs made).
  const earlier = previous ? io.readEvents(paths) : [];
  const { record, notifications } = openParentRecord(options, io, paths);
  // The family's record in the spend ledger, made before any child starts: each child takes its budgets from it.
  const spentBefore = io.spend ? openFamilySpend(options, io.spend, io.env, io.now()) : (previous?.cost_usd ?? 0);
  const config = {
    runId,
    parallel: settings.parallel,
    tasksName: settings.tasks,
    branch: integration.branch,
    maxCostUsd: settings.maxCostUsd,
    maxRuntimeMs: settings.maxRuntimeMs,
    spentBefore,
  };
  // The runtime cap counts from this start, as the engine counts it for any run (continuing starts it afresh).
  const world = { io, paths, record, startedAtMs: io.now().getTime() };
  const resolves = earlier.filter((event) => event.type === "resolve_started").length;
  const driver = new FanOutDriver(initialFanOut(config, previous?.iteration ?? 0), world, (reports) => {
    const deps = {
      runId,
      file: resolve(projectDir, settings.tasks),
      tasksName: settings.tasks,
      maxResolve: settings.maxResolve,
      integration,
      io,
      record,
    };
    return new MergeQueue({ ...deps, ...reports }, resolves);
  });
  let ending: Ending;
  try {
    // Continuing: a child that ended DONE but was never merged nor abandoned is merged first.
    for (const owed of owedMerges(earlier, driver.merges.tasks())) driver.post({ type: "owed", ...owed });
    ending = await driver.run();
  } catch (error) {
    // A failure the step could not take (a run file swapped while the parent looked): the run still ends, and
    // nothing of it (a child, a resolve run, a merge) outlives that end.
    ending = { reason: "FAILED", detail: failureDetail(error) };
    await driver.abandon(ending);
  }
  const unmerged = driver.merges.length;
  if (unmerged > 0)
    ending = {
      ...ending,
      detail: `${ending.detail}; ${unmerged} DONE child(ren) not merged yet: ralph continue ${runId} merges them`,
    };
  const end = driver.state;
  const result = finishRun(record, ending, io.now(), {
    iteration: end.started,
    cost_usd: spentUsd(end, {}),
    current_task: null,
  });
  // The run_ended notification is on its way: give it a bounded time to arrive.
  await notifications?.drain(ending, io.signals.interrupted);
  return holdMarker(result, paths.progress, io.listener, io.signals.urgent);
}
