// Runs the loop in the foreground with the real world wired in: locks, processes, signals, guardian, terminal.
import { mkdirSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import type { RunSettings } from "../config/run-options.js";
import { realIo } from "../engine/engine-io.js";
import { runEngine } from "../engine/run-engine.js";
import { markEndedIfNot, type RunResult } from "../run/finish-run.js";
import { startGuardian } from "../process/guardian.js";
import { readProcess } from "../process/proc-table.js";
import { isRunnerAlive } from "../process/runner-alive.js";
import { dieOfSignal, watchSignals } from "../process/signals.js";
import { writeFileAtomic } from "../store/atomic-write.js";
import { acquireLock, type LockHolder } from "../store/lock-file.js";
import { projectLockPath, runPaths } from "../store/run-paths.js";
import type { Plan } from "../store/plan-file.js";
import type { RunStatus } from "../store/status-file.js";
import { createRenderer, summaryLines } from "./render.js";
import { UsageError } from "./usage-error.js";

/** What to start. */
export interface StartRunInput {
  projectDir: string;
  runId: string;
  settings: RunSettings;
  plan: Plan;
  previous: RunStatus | null;
  /** Take the project-wide lock too (runs started without --name). */
  projectLock: boolean;
  /** Changes to make to the run directory once its locks are held (`ralph continue`). */
  prepare?: () => void;
  /** Extra lines printed after the summary (human mode only). */
  epilogue?: (result: RunResult) => string[];
}

/** Runs the loop and returns the exit code; on a signal the process dies of that signal instead. */
export async function startRun(input: StartRunInput): Promise<number> {
  const pidStart = readProcess(process.pid)?.startTime ?? null;
  const holder: LockHolder = { pid: process.pid, pid_start: pidStart, hostname: hostname(), run_id: input.runId, acquired_at: new Date().toISOString() };
  const paths = runPaths(input.projectDir, input.runId);
  const notes: string[] = [];
  const releases: Array<() => void> = [];
  const releaseAll = () => releases.splice(0).reverse().forEach((release) => release());
  try {
    mkdirSync(join(input.projectDir, ".ralph"), { recursive: true, mode: 0o700 });
    if (input.projectLock) {
      const lock = acquireLock(projectLockPath(input.projectDir), holder, isRunnerAlive);
      if (!lock.ok) {
        throw new UsageError(`another run is active in this project (${lock.holder?.run_id ?? "unknown"}, pid ${lock.holder?.pid ?? "?"}); stop it, or give --name to run several`);
      }
      releases.push(lock.release);
      if (lock.tookOverFrom) notes.push(`took over the project lock left by dead runner pid ${lock.tookOverFrom.pid} (run ${lock.tookOverFrom.run_id})`);
    }
    mkdirSync(paths.dir, { recursive: true, mode: 0o700 });
    const lock = acquireLock(paths.lock, holder, isRunnerAlive);
    if (!lock.ok) throw new UsageError(`run ${input.runId} is being driven by another runner (pid ${lock.holder?.pid ?? "?"})`);
    releases.push(lock.release);
    if (lock.tookOverFrom) notes.push(`took over the run lock left by dead runner pid ${lock.tookOverFrom.pid}`);
    writeFileAtomic(paths.settings, `${JSON.stringify(input.settings, null, 2)}\n`);
    input.prepare?.();
  } catch (error) {
    releaseAll();
    throw error;
  }

  const signals = watchSignals(() => markEndedIfNot(paths.progress, "INTERRUPTED"));
  const out = process.stdout;
  const listener = createRenderer({ json: input.settings.json, live: input.settings.live, maxIterations: input.plan.maxIterations }, out);
  if (!input.settings.json) out.write(`ralph: run ${input.runId} with the ${input.settings.agent} agent (max ${input.plan.maxIterations || "unlimited"} iterations)\n`);
  let result: RunResult;
  try {
    result = await runEngine(
      { projectDir: input.projectDir, runId: input.runId, settings: input.settings, plan: input.plan, previous: input.previous, notes },
      realIo({ env: process.env, signals, listener, host: { pid: process.pid, pidStart, hostname: holder.hostname }, startGuardian }),
    );
  } finally {
    releaseAll();
  }
  if (!input.settings.json) {
    for (const line of [...summaryLines(result), ...(input.epilogue?.(result) ?? [])]) out.write(`${line}\n`);
  }
  if (result.reason === "INTERRUPTED" && result.signal) {
    // Let the summary reach the terminal, but never wait on a pipe nobody reads.
    await new Promise<void>((resolve) => {
      out.write("", () => resolve());
      setTimeout(resolve, 200).unref();
    });
    dieOfSignal(result.signal);
  }
  signals.dispose();
  return result.exitCode;
}
