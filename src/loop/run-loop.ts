// The loop engine: iterations of a fresh agent process until an exit reason is reached.
//
//   start → [boundary: signals, state.md, STOP, PAUSE] → limits → select task → run agent → record
//         → decide (DONE / failure / stall) → [boundary] → …
//
// Every way out returns an Ending to runLoop, which hands it to finishRun, the one place that writes
// the completion marker; an exception anywhere becomes FAILED there too.
import { randomBytes } from "node:crypto";
import { checkBoundary } from "./check-boundary.js";
import { ControlWatch } from "./control-watch.js";
import { finishRun, type Ending, type RunResult } from "./finish-run.js";
import { runIteration } from "./iteration.js";
import type { LoopDeps, LoopOptions } from "./loop-types.js";
import { RunRecord } from "./run-record.js";
import { LoopState } from "./loop-state.js";
import { takeFingerprint } from "./progress-fingerprint.js";
import { Redactor } from "../redact/redactor.js";
import { holdCompletionMarker } from "../store/progress-log.js";
import { runPaths } from "../store/run-paths.js";
import { RunFileError } from "../store/regular-file.js";
import { writeStateFile } from "../store/state-file.js";
import type { RunStatus } from "../store/status-file.js";

/** Runs the loop to its end and returns how it ended; never throws for expected failures. */
export async function runLoop(options: LoopOptions, deps: LoopDeps): Promise<RunResult> {
  const paths = runPaths(options.projectDir, options.runId);
  const record = RunRecord.create(paths, initialStatus(options, deps), deps.listener, deps.now, new Redactor(deps.env));
  record.guard.reserve();
  // Every process of this run's agents carries this in its environment, so none can hide from the teardown.
  const marker = { key: "RALPH_SUPERVISOR", value: `${options.runId}:${deps.pid}:${randomBytes(6).toString("hex")}` };
  const guardian = deps.startGuardian?.(marker, options.settings.graceMs) ?? null;
  const jobControl = deps.watchJobControl?.(marker) ?? null;
  const control = new ControlWatch(paths);
  let ending: Ending;
  try {
    if (!options.previous) writeStateFile(paths.state, options.state);
    record.event("run_started", {
      agent: options.settings.agent,
      max_iterations: options.state.maxIterations,
      cwd: options.projectDir,
      continued_from_iteration: options.previous?.iteration ?? null,
      supervision: deps.supervision ?? "tree",
    });
    record.log(options.previous ? `run continued after iteration ${options.previous.iteration}` : "run started");
    if (options.previous) record.progress([["continued_at", deps.now().toISOString()], ["continued_from_iteration", options.previous.iteration]]);
    for (const note of options.notes ?? []) record.log(note);
    record.startHeartbeat();
    control.start();
    const loop = new LoopState(options, deps, record, control, marker);
    control.onChange = () => loop.serveSetRequests();
    if (options.settings.stallLimit > 0) loop.fingerprint = await takeFingerprint(options.projectDir, loop.tasksFile ?? undefined);
    ending = await iterate(loop);
  } catch (error) {
    // A run file that is not what it should be (a planted link or FIFO) is named as such, not as a bug.
    const message = (error as Error).message ?? String(error);
    ending = { reason: "FAILED", detail: error instanceof RunFileError ? message : `internal error: ${message}` };
  } finally {
    control.close();
    jobControl?.dispose();
  }
  const result = finishRun(record, ending, deps.now());
  guardian?.dispose();
  if (!result.marked) {
    deps.listener.log(`waiting for disk space to write the end of the run to ${paths.progress}`);
    result.marked = await holdCompletionMarker(paths.progress, ending.reason, deps.signals.urgent);
  }
  return result;
}

async function iterate(loop: LoopState): Promise<Ending> {
  for (;;) {
    const before = await checkBoundary(loop);
    if (before) return before;
    const limit = loop.limitReached();
    if (limit) return limit;
    const selection = loop.selectTask();
    if ("reason" in selection) return selection;
    const outcome = await runIteration(loop, selection.task);
    if (outcome) return outcome;
  }
}

/** The first status.json of a run (or of its continuation). */
export function initialStatus(options: Pick<LoopOptions, "runId" | "projectDir" | "settings" | "state" | "previous">, deps: Pick<LoopDeps, "now" | "pid" | "pidStart" | "hostname" | "supervision">): RunStatus {
  const now = deps.now().toISOString();
  const previous = options.previous;
  return {
    schema_version: 1,
    run_id: options.runId,
    mode: "run",
    pid: deps.pid,
    pid_start: deps.pidStart,
    hostname: deps.hostname,
    cwd: options.projectDir,
    agent: options.settings.agent,
    state: "starting",
    iteration: previous?.iteration ?? 0,
    max_iterations: options.state.maxIterations,
    calls: previous?.calls ?? 0,
    cost_usd: previous?.cost_usd ?? 0,
    tokens: previous?.tokens ?? { input: 0, output: 0 },
    session_id: previous?.session_id ?? null,
    current_task: null,
    started_at: previous?.started_at ?? now,
    updated_at: now,
    ended_at: null,
    exit_reason: null,
    exit_code: null,
    last_action: "starting",
    failures: 0,
    supervision: deps.supervision ?? "tree",
    resources: null,
  };
}
