// The engine's entry point: creates the run's record, drives the machine to its end, and finishes the run.
import { randomBytes } from "node:crypto";
import { RUN_MARKER_KEY, type SupervisionMode } from "../process/supervision.js";
import { Redactor } from "../redact/redactor.js";
import { finishRun, holdMarker, type Ending, type RunResult } from "../run/finish-run.js";
import { newStatus, type RunHost } from "../run/new-status.js";
import { RunRecord } from "../run/run-record.js";
import { RunFileError } from "../store/regular-file.js";
import { runPaths } from "../store/run-paths.js";
import type { RunStatus } from "../store/status-file.js";
import { Driver } from "./drive.js";
import type { EngineIo } from "./engine-io.js";
import { startNotifications } from "./run-notifications.js";
import type { EngineOptions } from "./engine-options.js";

export { workDirOf, type EngineOptions } from "./engine-options.js";

/** The first status.json of a run (or of its continuation, which keeps the counters). */
export function firstStatus(
  options: Pick<EngineOptions, "projectDir" | "runId" | "settings" | "plan" | "previous" | "worktree" | "parent">,
  host: RunHost,
  now: Date,
  supervision?: SupervisionMode,
): RunStatus {
  const { previous } = options;
  const status = newStatus({
    runId: options.runId,
    mode: "run",
    cwd: options.projectDir,
    agent: options.settings.agent,
    host,
    now,
    state: "starting",
    lastAction: "starting",
    maxIterations: options.plan.maxIterations,
    iteration: previous?.iteration,
    calls: previous?.calls,
    costUsd: previous?.cost_usd,
    tokens: previous?.tokens,
    sessionId: previous?.session_id,
    startedAt: previous?.started_at,
    supervision: supervision ?? "tree",
    // The start of the run's branch is kept from its first start on.
    worktree: options.worktree
      ? {
          ...options.worktree,
          base: options.worktree.base ?? previous?.base ?? null,
          baseBranch: options.worktree.baseBranch ?? previous?.base_branch ?? null,
        }
      : null,
    parent: options.parent ?? null,
  });
  const marked = options.settings.dryRun ? { ...status, dry_run: true } : status;
  // An open (or answered, not yet passed on) question outlives a crash: it is kept from the first write on.
  return previous?.question ? { ...marked, question: previous.question, answer: previous.answer ?? null } : marked;
}

/** Runs the loop to its end and returns how it ended; never throws for expected failures. */
export async function runEngine(options: EngineOptions, io: EngineIo): Promise<RunResult> {
  const paths = runPaths(options.projectDir, options.runId);
  const notifications = startNotifications(options.settings.notifyTargets, io.listener, {
    cwd: options.projectDir,
    env: io.env,
    spawn: io.spawnOwn ?? io.spawnAgent,
    runDir: paths.dir,
  });
  const listener = notifications?.listener ?? io.listener;
  const record = RunRecord.create(
    paths,
    firstStatus(options, io.host, io.now(), io.supervision),
    listener,
    io.now,
    new Redactor(io.env),
  );
  notifications?.attach(record);
  record.guard.reserve();
  // A connection the sandbox refused is the agent's business the person must hear of: logged and an event.
  const unwatchSandbox = io.sandbox?.watchDenied(({ host, port }) => {
    record.log(`sandbox: blocked a connection to ${host}:${port} (not in sandbox.network.allow)`);
    record.event({ type: "sandbox_denied", iteration: record.status.iteration, host, port });
  });
  // Every process of this run's agents carries this in its environment, so none can hide from the teardown.
  const marker = { key: RUN_MARKER_KEY, value: `${options.runId}:${io.host.pid}:${randomBytes(6).toString("hex")}` };
  const guardian = io.startGuardian?.(marker, options.settings.graceMs) ?? null;
  const jobControl = io.watchJobControl?.(marker) ?? null;
  const driver = new Driver(options, io, record, marker);
  let ending: Ending;
  try {
    ending = await driver.run();
  } catch (error) {
    // A run file that is not what it should be (a planted link or FIFO) is named as such, not as a bug.
    const message = (error as Error).message ?? String(error);
    ending = { reason: "FAILED", detail: error instanceof RunFileError ? message : `internal error: ${message}` };
    await driver.abandon();
  } finally {
    const closed = driver.close();
    jobControl?.dispose();
    unwatchSandbox?.();
    await closed;
  }
  // No agent runs any more (the driver ends and awaits every tree before it returns): the guardian has
  // nothing left to guard, and leaves while the ending is recorded instead of after.
  guardian?.dispose();
  const result = finishRun(record, ending, io.now(), driver.status());
  // The run_ended notification is on its way: give it a bounded time to arrive.
  await notifications?.drain(ending, io.signals.interrupted);
  return holdMarker(result, paths.progress, io.listener, io.signals.urgent);
}
