// The engine's entry point: creates the run's record, drives the machine to its end, and finishes the run.
import { randomBytes } from "node:crypto";
import type { RunSettings } from "../config/run-options.js";
import { finishRun, type Ending, type RunResult } from "../run/finish-run.js";
import { newStatus } from "../run/new-status.js";
import { RunRecord } from "../run/run-record.js";
import type { Plan } from "../store/plan-file.js";
import { runPaths } from "../store/run-paths.js";
import type { RunStatus } from "../store/status-file.js";
import { Driver } from "./drive.js";
import type { EngineIo } from "./engine-io.js";

/** What to run. */
export interface EngineOptions {
  projectDir: string;
  runId: string;
  settings: RunSettings;
  /** The plan written to state.md at the start (ignored when continuing: the file is re-read). */
  plan: Plan;
  /** The previous status when continuing a run (`ralph continue`), to keep its counters. */
  previous: RunStatus | null;
  /** Lines to log at the start (e.g. a stale lock that was taken over). */
  notes?: string[];
}

/** Runs the loop to its end and returns how it ended; never throws for expected failures. */
export async function runEngine(options: EngineOptions, io: EngineIo): Promise<RunResult> {
  const paths = runPaths(options.projectDir, options.runId);
  const { previous, settings } = options;
  const status = newStatus({
    runId: options.runId,
    mode: "run",
    cwd: options.projectDir,
    agent: settings.agent,
    host: io.host,
    now: io.now(),
    state: "starting",
    lastAction: "starting",
    maxIterations: options.plan.maxIterations,
    iteration: previous?.iteration,
    calls: previous?.calls,
    costUsd: previous?.cost_usd,
    tokens: previous?.tokens,
    sessionId: previous?.session_id,
    startedAt: previous?.started_at,
  });
  const record = RunRecord.create(paths, status, io.listener, io.now);
  // Every process of this run's agents carries this in its environment, so none can hide from the teardown.
  const marker = { key: "RALPH_SUPERVISOR", value: `${options.runId}:${io.host.pid}:${randomBytes(6).toString("hex")}` };
  const guardian = io.startGuardian?.(marker, settings.graceMs) ?? null;
  const driver = new Driver(options, io, record, marker);
  let ending: Ending;
  try {
    ending = await driver.run();
  } catch (error) {
    ending = { reason: "FAILED", detail: `internal error: ${(error as Error).message ?? String(error)}` };
    await driver.abandon();
  } finally {
    driver.close();
  }
  const result = finishRun(record, ending, io.now(), driver.status());
  guardian?.dispose();
  return result;
}

