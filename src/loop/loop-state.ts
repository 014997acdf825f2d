// The mutable state of one loop: current state.md, counters, and the limit and task checks that read them.
import { resolve } from "node:path";
import { describeTask, firstIncomplete, loadTasks, type Task } from "./tasks.js";
import type { Ending } from "./finish-run.js";
import type { LoopDeps, LoopOptions } from "./loop-types.js";
import type { ControlWatch } from "./control-watch.js";
import type { RunRecord } from "./run-record.js";
import type { RunState } from "../store/state-file.js";
import { StateGuard } from "../store/state-guard.js";
import { serveSetRequests } from "../store/serve-set-requests.js";
import { isAlive, readEnvMarker, readProcess } from "../process/proc-table.js";
import type { TreeMarker } from "../process/inventory.js";
import type { Fingerprint } from "./progress-fingerprint.js";

/** A task chosen for the next iteration, or none when the run has no task list. */
export type TaskSelection = { task: string | null } | Ending;

/** One loop's state, shared by the boundary check and the iteration. */
export class LoopState {
  /** state.md as the runner accepts it (agent edits made during an iteration do not loosen it). */
  readonly guard: StateGuard;
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
  /** The last good task list (by file) and the last task-list problem logged: a broken list is tolerated like state.md. */
  private lastGoodTasks: { file: string; tasks: Task[] } | null = null;
  private tasksProblem: string | null = null;
  readonly startedAtMs: number;

  constructor(
    readonly options: LoopOptions,
    readonly deps: LoopDeps,
    readonly record: RunRecord,
    readonly control: ControlWatch,
    readonly marker: TreeMarker,
  ) {
    this.guard = new StateGuard(record.paths.state, options.state);
    this.startedAtMs = deps.now().getTime();
  }

  /** The state in force. */
  get state(): RunState {
    return this.guard.state;
  }

  /** After an agent iteration: a state.md change written while it ran is reported; only its tightenings apply. */
  guardStateAfter(iteration: number): void {
    const before = this.state.maxIterations;
    const rejected = this.guard.afterIteration(iteration);
    if (!rejected) return;
    const applied = rejected.applied.length > 0 ? `; applied only: ${rejected.applied.join(", ")}` : "";
    this.record.log(
      `state.md was changed while iteration ${iteration} ran; not applied: ${rejected.ignored.join(", ") || "nothing"}${applied}` +
        ` (kept as ${rejected.keptAs}; change the run with ralph set, or edit state.md while it is paused)`,
    );
    this.record.event("state_change_rejected", { iteration, ignored: rejected.ignored, applied: rejected.applied, kept_as: rejected.keptAs });
    this.syncCap(before);
  }

  /** Applies pending `ralph set` requests from people (never from a process of this run's agent). */
  serveSetRequests(): void {
    const before = this.state.maxIterations;
    const served = serveSetRequests(this.record.paths.dir, this.guard, (request) => {
      const info = readProcess(request.pid);
      if (!isAlive(info) || (request.pid_start !== null && info?.startTime !== request.pid_start)) return "the requesting process is gone";
      if (readEnvMarker(request.pid, this.marker.key, this.marker.value) === "yes" || descendsFrom(request.pid, this.deps.pid)) {
        return "refused: the request comes from this run's agent";
      }
      return null;
    });
    for (const outcome of served) {
      this.record.log(outcome.ok ? `ralph set: ${outcome.applied}` : `ralph set refused: ${outcome.message}`);
      this.record.event("state_set", outcome.ok ? { applied: outcome.applied } : { refused: outcome.message });
    }
    this.syncCap(before);
  }

  /** Mirrors a changed iteration cap into status.json. */
  syncCap(before: number): void {
    const cap = this.state.maxIterations;
    if (cap !== before) this.record.update({ max_iterations: cap });
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
    let tasks: Task[];
    if (list.ok) {
      if (this.tasksProblem) this.record.log(`task list ${file} is readable again`);
      this.tasksProblem = null;
      this.lastGoodTasks = { file, tasks: list.tasks };
      tasks = list.tasks;
    } else {
      // Like a broken state.md: logged once, the last good version stays in force until it is fixed.
      if (this.lastGoodTasks?.file !== file) return { reason: "FAILED", detail: `task list ${list.file}: ${list.message}` };
      if (this.tasksProblem !== list.message) this.record.log(`ignoring task list ${file} until it is fixed (the last good version stays in force): ${list.message}`);
      this.tasksProblem = list.message;
      tasks = this.lastGoodTasks.tasks;
    }
    const next = firstIncomplete(tasks);
    if (!next) return { reason: "NO_WORK", detail: `every task in ${this.state.tasks} is done` };
    return { task: describeTask(next) };
  }
}

/** Whether `pid` is a descendant of `ancestor` (by parentage, as far as it can be followed). */
function descendsFrom(pid: number, ancestor: number): boolean {
  let current = readProcess(pid);
  for (let depth = 0; current && depth < 128; depth++) {
    if (current.ppid === ancestor) return true;
    if (current.ppid <= 1) return false;
    current = readProcess(current.ppid);
  }
  return false;
}
