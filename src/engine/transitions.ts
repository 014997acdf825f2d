// Transitions several phases share: ending the run, applying a new plan, the limits, going on to the next boundary.
import { limitEnding, stopEnding } from "../control/limit-rules.js";
import { describeTask, type Task } from "../judge/tasks.js";
import type { Ending } from "../run/finish-run.js";
import type { RecordEntry } from "../run/run-record.js";
import type { Input, Machine, Phase, Step } from "./phase.js";

/** No change. */
export function stay(machine: Machine): Step {
  return { machine, effects: [] };
}

/** Log lines to record. */
export function logs(...lines: string[]): RecordEntry[] {
  return lines.map((line) => ({ kind: "log", line }));
}

/** The machine in `phase`, with `patch` applied. */
export function to(machine: Machine, phase: Phase, patch: Partial<Machine> = {}): Machine {
  return { ...machine, ...patch, phase };
}

/** Log `line` under `key` unless this run has said it before; the machine remembers that it did. */
export function tellOnce(machine: Machine, key: string, line: string): { machine: Machine; entries: RecordEntry[] } {
  if (machine.toldOnce.includes(key)) return { machine, entries: [] };
  return { machine: { ...machine, toldOnce: [...machine.toldOnce, key] }, entries: logs(line) };
}

/** The tellOnce key of the note that stall detection is off (no git). */
export const STALL_OFF = "stall-off";

/** The one note that stall detection is off, from the fingerprint's message (which names git's absence itself). */
export function stallOffNote(message: string): string {
  return `stall detection needs git, so it is off here: ${message.replace(/ \(stall detection needs git\)$/, "")}`;
}

/** The run ends with `ending`, after recording `entries`. */
export function end(machine: Machine, ending: Ending, entries: RecordEntry[] = []): Step {
  return {
    machine: to(machine, { id: "ended", ending }),
    effects: entries.length > 0 ? [{ kind: "record", entries }] : [],
  };
}

/** INTERRUPTED by the signal. */
export function interrupted(signal: Input & { type: "signal" }): Ending {
  return { reason: "INTERRUPTED", detail: `received ${signal.signal}`, signal: signal.signal };
}

/** FAILED: a run file could not be written (a full disk). */
export function writeFailed(input: Input & { type: "recordFailed" }): Ending {
  return { reason: "FAILED", detail: input.message };
}

/** A plan the runner trusts (`ralph set`, a tightening) while an iteration runs: applied; it ends nothing before the boundary. */
export function onTrustedPlan(machine: Machine, input: Input & { type: "desired" }): Step {
  const next = applyDesired(machine, input);
  return { machine: next.machine, effects: next.entries.length > 0 ? [{ kind: "record", entries: next.entries }] : [] };
}

/** A new state.md read: the plan is replaced when it is good; a broken file is logged once. */
function applyDesired(
  machine: Machine,
  input: Input & { type: "desired" },
): { machine: Machine; entries: RecordEntry[] } {
  const { read } = input;
  const tasks = input.tasks === undefined ? machine.tasks : input.tasks;
  if (!read.ok) {
    if (machine.planProblem === read.message) return { machine: { ...machine, tasks }, entries: [] };
    return {
      machine: { ...machine, planProblem: read.message, tasks },
      entries: logs(`ignoring state.md until it is fixed (the last good version stays in force): ${read.message}`),
    };
  }
  const entries: RecordEntry[] = [];
  if (machine.planProblem) entries.push(...logs("state.md is readable again"));
  if (read.plan.maxIterations !== machine.plan.maxIterations)
    entries.push(...logs(`max_iterations changed to ${read.plan.maxIterations} in state.md`));
  return { machine: { ...machine, plan: read.plan, planProblem: null, tasks }, entries };
}

/** A new plan applied; `active: false` ends the run (with `onStop` recorded too). */
function onDesired(machine: Machine, input: Input & { type: "desired" }, onStop: RecordEntry[] = []): Step {
  const next = applyDesired(machine, input);
  if (!next.machine.plan.active) return end(next.machine, INACTIVE, [...next.entries, ...onStop]);
  return { machine: next.machine, effects: next.entries.length > 0 ? [{ kind: "record", entries: next.entries }] : [] };
}

/** STOPPED for a STOP file; null to go on. */
function stopOf(input: Input & { type: "sentinel" }): Ending | null {
  return stopEnding(input, { stop: "STOP file present", now: "stop --now requested" });
}

/** How `active: false` in state.md ends a run. */
const INACTIVE: Ending = { reason: "STOPPED", detail: "state.md says active: false" };

/** MAX_ITERATIONS, RUNTIME_EXCEEDED or BUDGET_EXCEEDED when a limit is reached before the next iteration (DRY_RUN in a dry run). */
export function limitReached(machine: Machine, nowMs: number): Ending | null {
  const { iteration, costUsd, startedAtMs } = machine.tally;
  const { maxRuntimeMs, maxCostUsd } = machine.config;
  const ending = limitEnding(
    { maxIterations: machine.plan.maxIterations, maxRuntimeMs, maxCostUsd },
    { iterations: iteration, elapsedMs: nowMs - startedAtMs, costUsd },
  );
  // A dry run that has shown its iterations ends as one: nothing was tried, so no limit was hit.
  if (ending && machine.config.dryRun)
    return {
      reason: "DRY_RUN",
      detail: `showed ${iteration} ${iteration === 1 ? "iteration" : "iterations"} (${ending.detail}); no agent was started`,
    };
  return ending;
}

/** On to the next boundary, after recording `entries`; the world is looked at afresh there. */
export function goOn(machine: Machine, entries: RecordEntry[]): Step {
  return {
    machine: to(machine, { id: "boundary" }),
    effects: [
      { kind: "record", entries },
      { kind: "look", what: "all" },
    ],
  };
}

/**
 * What every phase between iterations does alike: a signal, a failed write, STOP or `active: false` ends the
 * run (recording `onStop` too); a new plan is applied. Null for the inputs the phase handles itself.
 */
export function betweenIterations(machine: Machine, input: Input, onStop: RecordEntry[] = []): Step | null {
  switch (input.type) {
    case "signal":
      return end(machine, interrupted(input), onStop);
    case "recordFailed":
      return end(machine, writeFailed(input), onStop);
    case "desired":
      return onDesired(machine, input, onStop);
    case "sentinel": {
      const stop = stopOf(input);
      return stop ? end(machine, stop, onStop) : null;
    }
    // The phase's own business.
    case "control":
    case "tick":
    case "agentResult":
    case "agentExited":
    case "limitHit":
    case "checked":
    case "reviewed":
      return null;
    default: {
      const unreachable: never = input;
      throw new Error(`unknown input ${JSON.stringify(unreachable)}`);
    }
  }
}

/** With --task: that task in the task list as last read (undefined without --task, or when it is not there). */
export function onlyTask(machine: Machine): Task | undefined {
  const { tasks: list, config } = machine;
  return config.onlyTask && list?.ok ? list.tasks.find((candidate) => candidate.id === config.onlyTask) : undefined;
}

/**
 * With --task: DONE once that task is marked done in the task list as last read, else null. A task picked by
 * --task-index that is done before the run's first iteration leaves nothing to do: NO_WORK.
 */
export function taskFinished(machine: Machine): Ending | null {
  const mine = onlyTask(machine);
  // A review that did not approve the iteration that marked it keeps the task's work open.
  if (!mine?.done || reviewOpen(machine)) return null;
  const file = machine.plan.tasks ?? "the task list";
  if (machine.config.onlyTaskByIndex && machine.tally.iteration === 0)
    return { reason: "NO_WORK", detail: `task ${describeTask(mine)} was already done in ${file}` };
  return { reason: "DONE", detail: `task ${describeTask(mine)} is marked done in ${file}` };
}

/**
 * Whether reviews are configured and none approved the run's work: the run cannot end NO_WORK, nor a --task run
 * DONE by its mark. Work done with no review at all (the tasks marked by an iteration that failed, or that made
 * no claim) is not approved either; only a run that has not worked yet (iteration 0) has nothing to review.
 */
export function reviewOpen(machine: Machine): boolean {
  if (!machine.plan.completionCriteria.some((criterion) => criterion.type === "review")) return false;
  const { review, iteration } = machine.tally;
  return review === null ? iteration > 0 : review.verdict !== "approve";
}
