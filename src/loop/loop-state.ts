// The mutable state of one loop: current state.md, counters, and the limit and task checks that read them.
import { resolve } from "node:path";
import { describeTask, firstIncomplete, loadTasks } from "./tasks.js";
import type { Ending } from "./finish-run.js";
import type { LoopDeps, LoopOptions } from "./loop-types.js";
import type { ControlWatch } from "./control-watch.js";
import type { RunRecord } from "./run-record.js";
import type { RunState } from "../store/state-file.js";
import type { TreeMarker } from "../process/inventory.js";
import type { Fingerprint } from "./progress-fingerprint.js";

/** A task chosen for the next iteration, or none when the run has no task list. */
export type TaskSelection = { task: string | null } | Ending;

/** One loop's state, shared by the boundary check and the iteration. */
export class LoopState {
  /** The latest good state.md. */
  state: RunState;
  /** Consecutive failed iterations. */
  failures = 0;
  /** Consecutive iterations without progress. */
  stalled = 0;
  /** Consecutive usage-limit hits (for the fallback wait when no reset time is given). */
  consecutiveLimits = 0;
  /** Failing-check context carried into the next prompt. */
  failingChecks = "";
  /** The project's progress fingerprint after the last iteration (stall detection). */
  fingerprint: Fingerprint | null = null;
  /** The last state.md problem logged, so a broken file is reported once. */
  stateProblem: string | null = null;
  readonly startedAtMs: number;

  constructor(
    readonly options: LoopOptions,
    readonly deps: LoopDeps,
    readonly record: RunRecord,
    readonly control: ControlWatch,
    readonly marker: TreeMarker,
  ) {
    this.state = options.state;
    this.startedAtMs = deps.now().getTime();
  }

  /** The task list file from state.md, resolved against the project. */
  get tasksFile(): string | null {
    return this.state.tasks ? resolve(this.options.projectDir, this.state.tasks) : null;
  }

  /** INTERRUPTED once the runner has received an interrupting signal; FAILED once a run file could not be written. */
  interruption(): Ending | null {
    const { signals } = this.deps;
    const signal = signals.firstSignal();
    if (signals.interrupted.aborted && signal) return { reason: "INTERRUPTED", detail: `received ${signal}`, signal };
    const writeFailure = this.record.guard.failure;
    return writeFailure ? { reason: "FAILED", detail: writeFailure } : null;
  }

  /** MAX_ITERATIONS, RUNTIME_EXCEEDED or BUDGET_EXCEEDED when a limit is reached before the next iteration. */
  limitReached(): Ending | null {
    const { iteration, cost_usd: cost } = this.record.status;
    const max = this.state.maxIterations;
    if (max > 0 && iteration >= max) return { reason: "MAX_ITERATIONS", detail: `reached max_iterations ${max}` };
    const { maxRuntimeMs, maxCostUsd } = this.options.settings;
    const elapsed = this.deps.now().getTime() - this.startedAtMs;
    if (maxRuntimeMs !== null && elapsed >= maxRuntimeMs) {
      return { reason: "RUNTIME_EXCEEDED", detail: `ran ${Math.round(elapsed / 1000)}s, limit ${Math.round(maxRuntimeMs / 1000)}s` };
    }
    if (maxCostUsd !== null && cost >= maxCostUsd) {
      return { reason: "BUDGET_EXCEEDED", detail: `spent $${cost.toFixed(4)} (CLI estimate), limit $${maxCostUsd}` };
    }
    return null;
  }

  /** The first incomplete task, NO_WORK when none is left, FAILED when the task file is broken. */
  selectTask(): TaskSelection {
    const file = this.tasksFile;
    if (!file) return { task: null };
    const list = loadTasks(file);
    if (!list.ok) return { reason: "FAILED", detail: `task list ${list.file}: ${list.message}` };
    const next = firstIncomplete(list.tasks);
    if (!next) return { reason: "NO_WORK", detail: `every task in ${this.state.tasks} is done` };
    return { task: describeTask(next) };
  }
}
