// The `--parallel` parent as a pure step, as the engine's step is for one run: phase × input → the next state
// and the effects to perform. No I/O here; the driver (fan-out-drive.ts) performs the effects and feeds back
// what happened.
//
//  --> [running] ---- PAUSE ----> [paused] ---- PAUSE removed ----> [running]
//        |   a look: start children up to N on pending tasks; merge the next DONE child; relay questions
//        |
//        | signal, STOP, a limit, a failed task list, a failed merge or record write (any effect that fails),
//        | no child running and nothing to merge (DONE; NO_WORK when no child ran; FAILED when a task was left pending)
//        v
//     [ending] -- each look: pass the ending on to every child (signal, or STOP file); merges go on
//        |
//        | no child running, no merge under way, and nothing to merge
//        | (or the merges wait for `continue`: a signal, or the queue held)
//        v
//     [ended]
//
//  paused -- signal, STOP, a limit --> [ending]. A child's exit is taken in any phase: DONE queues its merge,
//  any other ending leaves its task pending (FAILED at the end). A signal replaces any other ending.
import { firstIncomplete, type Task, type TaskListResult } from "../judge/tasks.js";
import type { SentinelState } from "../control/control-files.js";
import { remainingBudgetUsd, remainingRuntimeMs } from "../control/limit-rules.js";
import type { Ending } from "../run/finish-run.js";
import type { InterruptSignal } from "../exit/exit-reasons.js";
import type { RecordEntry } from "../run/run-record.js";
import type { RunStatus } from "../store/status-file.js";
import type { RunEvent } from "../store/event-log.js";
import type { ChildExit, ChildLimits, ChildStart } from "./fan-out-io.js";
import { allTasksEnding, childEnding, limitEnding, stopEnding } from "./fan-out-endings.js";

/** What does not change while the parent runs. */
export interface FanOutConfig {
  runId: string;
  parallel: number;
  /** The task list as given (for messages). */
  tasksName: string;
  /** The integration branch. */
  branch: string;
  maxCostUsd: number | null;
  maxRuntimeMs: number | null;
  /** Spent before this start (continuing). */
  spentBefore: number;
}

/** How far a stop was passed on to a child: not yet, at its boundary, or now. */
export type StopLevel = "none" | "stop" | "now";

/** A child run (or resolve run) under way. */
export interface ChildRun {
  id: string;
  task: Task;
  stopAsked: StopLevel;
}

export type FanOutPhase = "running" | "paused" | "ending" | "ended";

export interface FanOutState {
  phase: FanOutPhase;
  config: FanOutConfig;
  ending: Ending | null;
  /** Children started so far (continuing: also before), and so the number in the next child's id. */
  started: number;
  running: ChildRun[];
  resolving: ChildRun | null;
  /** Children (and resolve runs) that ended here: their tasks are not started again, their spend counts. */
  ended: Array<{ id: string; taskId: string; costUsd: number }>;
  /** Tasks left pending, with why. */
  failed: Array<{ taskId: string; reason: string }>;
  /** The open question of each child already relayed. */
  told: Record<string, string>;
  /** From the last look: whether stop --now was asked, and whether a second signal came. */
  stopNow: boolean;
  urgent: boolean;
  /** The status last written (the parent writes status.json only when it would say something new). */
  shown: string;
}

/** The merge queue as the last look saw it. */
export interface QueueView {
  length: number;
  current: string | null;
  waiting: boolean;
}

/** Everything the parent looks at each time it wakes. */
export interface Look {
  type: "look";
  signal: InterruptSignal | null;
  urgent: boolean;
  sentinels: SentinelState;
  elapsedMs: number;
  /** The first of the parent's own record writes that failed (a full disk), or null. */
  recordFailure: string | null;
  /** Each running child's spend so far and its open question. */
  costs: Record<string, number>;
  questions: Record<string, string | null>;
  /** The task list as the parent knows it (its own copy). */
  tasks: TaskListResult;
  queue: QueueView;
}

export type FanOutInput =
  | Look
  /** A child ended: how its process ended and its status.json. */
  /** `costUsd`: what the child spent, from the spend ledger (without one, its status.json says). */
  | { type: "exited"; id: string; exit: ChildExit; status: RunStatus | null; costUsd?: number }
  /** An effect could not be performed (a record that cannot be written): the parent ends FAILED with `detail`. `id`: the child it was starting. */
  | { type: "lost"; id: string | null; detail: string }
  | { type: "resolveStarted"; id: string; task: Task }
  | { type: "resolveEnded"; costUsd: number }
  /** A merge was abandoned: its task stays pending. */
  | { type: "abandoned"; taskId: string; reason: string }
  | { type: "mergeFailed"; message: string }
  /** A STOP file was made for a child (it exists once its run directory does). */
  | { type: "stopped"; id: string; level: StopLevel }
  /** Continuing: a child that ended DONE before, never merged nor abandoned: its merge is made now. */
  | { type: "owed"; child: string; task: Task };

export type FanOutEffect =
  | { kind: "start"; start: ChildStart; task: Task }
  | { kind: "signal"; id: string; signal: NodeJS.Signals }
  | { kind: "stop"; id: string; now: boolean }
  | { kind: "queue"; child: string; task: Task }
  | { kind: "merge" }
  /** Stop merging: what is queued waits for `continue`. */
  | { kind: "hold" }
  | { kind: "record"; entry: RecordEntry }
  | { kind: "status"; patch: Partial<RunStatus> }
  | { kind: "end"; ending: Ending };

export interface FanOutStep {
  state: FanOutState;
  effects: FanOutEffect[];
}

/** The state before the first look. */
export function initialFanOut(config: FanOutConfig, started: number): FanOutState {
  return {
    phase: "running",
    config,
    ending: null,
    started,
    running: [],
    resolving: null,
    ended: [],
    failed: [],
    told: {},
    stopNow: false,
    urgent: false,
    shown: "",
  };
}

/** All the parent has spent: before, by the children and resolve runs that ended, and by the running ones so far. */
export function spentUsd(state: FanOutState, costs: Record<string, number>): number {
  const ended = state.ended.reduce((sum, child) => sum + child.costUsd, 0);
  const running = state.resolving ? [...state.running, state.resolving] : state.running;
  return state.config.spentBefore + ended + running.reduce((sum, child) => sum + (costs[child.id] ?? 0), 0);
}

/** What a child or resolve run started now may use: what is left of the parent's `--max-cost` and `--max-runtime`. */
export function shareOfLimits(state: FanOutState, costs: Record<string, number>, elapsedMs: number): ChildLimits {
  return {
    maxCostUsd: remainingBudgetUsd(state.config.maxCostUsd, spentUsd(state, costs)),
    maxRuntimeMs: remainingRuntimeMs(state.config.maxRuntimeMs, elapsedMs),
  };
}

/** The next state and the effects, for one input. */
export function fanOutStep(state: FanOutState, input: FanOutInput): FanOutStep {
  if (state.phase === "ended") return { state, effects: [] };
  switch (input.type) {
    case "look":
      return look(state, input);
    case "exited":
      return exited(state, input);
    case "lost":
      return {
        state: endWith(
          { ...state, running: state.running.filter((child) => child.id !== input.id) },
          { reason: "FAILED", detail: input.detail },
        ),
        effects: [],
      };
    case "resolveStarted": {
      const next = { ...state, resolving: { id: input.id, task: input.task, stopAsked: "none" as const } };
      return next.ending ? passOn(next, next.ending, []) : { state: next, effects: [] };
    }
    case "resolveEnded": {
      const { resolving } = state;
      const ended = resolving
        ? [...state.ended, { id: resolving.id, taskId: resolving.task.id, costUsd: input.costUsd }]
        : state.ended;
      return { state: { ...state, resolving: null, ended }, effects: [] };
    }
    case "abandoned":
      return {
        state: { ...state, failed: [...state.failed, { taskId: input.taskId, reason: input.reason }] },
        effects: [],
      };
    case "mergeFailed":
      return {
        state: endWith(state, {
          reason: "FAILED",
          detail: `integration branch ${state.config.branch}: ${input.message}`,
        }),
        effects: [{ kind: "hold" }],
      };
    case "stopped":
      return { state: withStopAsked(state, input.id, input.level), effects: [] };
    case "owed": {
      const ended = [...state.ended, { id: input.child, taskId: input.task.id, costUsd: 0 }];
      const line = `child ${input.child} ended DONE before; its merge into ${state.config.branch} is made now`;
      return {
        state: { ...state, ended },
        effects: [
          { kind: "queue", child: input.child, task: input.task },
          { kind: "record", entry: { kind: "log", line } },
        ],
      };
    }
    default: {
      const unreachable: never = input;
      throw new Error(`unknown fan-out input ${JSON.stringify(unreachable)}`);
    }
  }
}

/** `ending` unless the parent is ending already. */
function endWith(state: FanOutState, ending: Ending): FanOutState {
  return state.ending ? state : { ...state, ending, phase: "ending" };
}

function withStopAsked(state: FanOutState, id: string, level: StopLevel): FanOutState {
  const mark = (child: ChildRun) => (child.id === id ? { ...child, stopAsked: level } : child);
  return { ...state, running: state.running.map(mark), resolving: state.resolving ? mark(state.resolving) : null };
}

function exited(state: FanOutState, input: Extract<FanOutInput, { type: "exited" }>): FanOutStep {
  const child = state.running.find((candidate) => candidate.id === input.id);
  if (!child) return { state, effects: [] };
  const costUsd = input.costUsd ?? input.status?.cost_usd ?? 0;
  const outcome = childEnding(input.status, input.exit);
  const { task } = child;
  const done = outcome.reason === "DONE";
  const failed = done
    ? state.failed
    : [...state.failed, { taskId: task.id, reason: `child ${child.id} ended ${outcome.reason}: ${outcome.detail}` }];
  const note = done
    ? `task ${task.id} waits to be merged into ${state.config.branch}`
    : `task ${task.id} stays pending: ${outcome.detail}`;
  const next = {
    ...state,
    running: state.running.filter((other) => other !== child),
    ended: [...state.ended, { id: child.id, taskId: task.id, costUsd }],
    failed,
  };
  const effects: FanOutEffect[] = [
    ...(done ? [{ kind: "queue", child: child.id, task } as const] : []),
    {
      kind: "record",
      entry: {
        kind: "event",
        body: {
          type: "child_ended",
          child: child.id,
          task: task.id,
          reason: outcome.reason,
          exit_code: input.exit.code,
          detail: outcome.detail,
          cost_usd: costUsd,
        },
      },
    },
    {
      kind: "record",
      entry: {
        kind: "progress",
        block: [
          ["child", child.id],
          ["task", task.id],
          ["child_reason", outcome.reason],
          ["child_detail", outcome.detail],
          ["cost_usd", costUsd],
        ],
      },
    },
    { kind: "record", entry: { kind: "log", line: `child ${child.id} ended ${outcome.reason}; ${note}` } },
  ];
  return { state: next, effects };
}

function look(before: FanOutState, input: Look): FanOutStep {
  const { config } = before;
  const effects: FanOutEffect[] = [];
  let state: FanOutState = { ...before, stopNow: input.sentinels.stopNow, urgent: input.urgent };
  // A signal replaces any other ending: the children are then signalled, not stopped.
  if (input.signal && state.ending?.reason !== "INTERRUPTED")
    state = {
      ...state,
      phase: "ending",
      ending: { reason: "INTERRUPTED", detail: `received ${input.signal}`, signal: input.signal },
    };
  // A record the parent can no longer write (a full disk) ends it FAILED, as it ends any run.
  const failedWrite: Ending | null =
    input.recordFailure === null ? null : { reason: "FAILED", detail: input.recordFailure };
  const ending =
    failedWrite ?? stopEnding(input.sentinels) ?? limitEnding(config, spentUsd(state, input.costs), input.elapsedMs);
  if (ending) state = endWith(state, ending);
  if (!state.ending && input.sentinels.pause !== (state.phase === "paused")) {
    const paused = input.sentinels.pause;
    state = { ...state, phase: paused ? "paused" : "running" };
    effects.push({ kind: "record", entry: { kind: "event", body: { type: paused ? "paused" : "resumed" } } });
    effects.push({
      kind: "record",
      entry: {
        kind: "log",
        line: paused
          ? "paused: no new child run starts until PAUSE is removed (running children go on; pause them one by one)"
          : "resumed",
      },
    });
  }
  if (state.phase === "running") state = startChildren(state, input, effects);
  if (state.ending) state = passOn(state, state.ending, effects).state;
  else state = relay(state, input, effects);
  effects.push({ kind: "merge" });
  const status = statusOf(state, input);
  const shown = JSON.stringify(status);
  if (shown !== state.shown) effects.push({ kind: "status", patch: status });
  state = { ...state, shown };
  const { queue } = input;
  if (
    state.ending &&
    state.running.length === 0 &&
    queue.current === null &&
    (queue.length === 0 || queue.waiting || state.ending.reason === "INTERRUPTED")
  ) {
    effects.push({ kind: "end", ending: state.ending });
    state = { ...state, phase: "ended" };
  }
  return { state, effects };
}

/** Starts children on pending tasks up to `parallel`; ends the parent when there is nothing left to do. */
function startChildren(before: FanOutState, input: Look, effects: FanOutEffect[]): FanOutState {
  const { config } = before;
  const list = input.tasks;
  if (!list.ok) return endWith(before, { reason: "FAILED", detail: `task list ${config.tasksName}: ${list.message}` });
  let state = before;
  // A task whose child ended here (DONE or not) is not started again in this run, whatever the list says.
  const busy = new Set([...state.running.map((child) => child.task.id), ...state.ended.map((child) => child.taskId)]);
  let pending = list.tasks.filter((task) => !task.done && !busy.has(task.id));
  while (state.running.length < config.parallel && pending.length > 0) {
    const task = firstIncomplete(pending) as Task;
    pending = pending.filter((other) => other !== task);
    const id = `${config.runId}-${state.started + 1}`;
    const { maxCostUsd, maxRuntimeMs } = shareOfLimits(state, input.costs, input.elapsedMs);
    state = { ...state, started: state.started + 1, running: [...state.running, { id, task, stopAsked: "none" }] };
    effects.push({ kind: "start", start: { childId: id, taskId: task.id, maxCostUsd, maxRuntimeMs }, task });
    effects.push({
      kind: "record",
      entry: { kind: "event", body: { type: "child_started", child: id, task: task.id, branch: `ralph/${id}` } },
    });
    effects.push({
      kind: "record",
      entry: {
        kind: "log",
        line: `child ${id} started on task ${task.id}${task.title ? `: ${task.title}` : ""} (branch ralph/${id})`,
      },
    });
  }
  if (state.running.length > 0 || input.queue.length > 0 || input.queue.current !== null) return state;
  return endWith(
    state,
    allTasksEnding(
      config.tasksName,
      state.ended.length > 0,
      state.failed.map((entry) => entry.reason),
    ),
  );
}

/** Passes the parent's ending on to every child still running: the signal itself, or a STOP file. */
function passOn(state: FanOutState, ending: Ending, effects: FanOutEffect[]): FanOutStep {
  const all = state.resolving ? [...state.running, state.resolving] : state.running;
  let next = state;
  for (const child of all) {
    if (ending.reason === "INTERRUPTED") {
      // A second signal is passed on too: the child then skips its grace period, as the parent does.
      const level = state.urgent ? "now" : "stop";
      if (child.stopAsked !== level)
        effects.push({ kind: "signal", id: child.id, signal: (ending.signal ?? "SIGTERM") as NodeJS.Signals });
      next = withStopAsked(next, child.id, level);
      continue;
    }
    // Only `stop --now` ends a child's agent at once; a limit or STOP lets its iteration finish, as in any run.
    const now = ending.reason === "STOPPED" && state.stopNow;
    if (child.stopAsked === (now ? "now" : "stop") || child.stopAsked === "now") continue;
    effects.push({ kind: "stop", id: child.id, now });
  }
  return { state: next, effects };
}

/** Relays each running child's new open question (a child prints nothing where a person looks: its parent says it). */
function relay(state: FanOutState, input: Look, effects: FanOutEffect[]): FanOutState {
  let told = state.told;
  for (const child of state.running) {
    const question = input.questions[child.id] ?? null;
    if (question === null || told[child.id] === question) continue;
    told = { ...told, [child.id]: question };
    effects.push({
      kind: "record",
      entry: {
        kind: "log",
        line: `child ${child.id} asks: ${JSON.stringify(question)}; it waits for: ralph answer ${child.id} TEXT`,
      },
    });
  }
  return told === state.told ? state : { ...state, told };
}

function statusOf(state: FanOutState, input: Look): Partial<RunStatus> {
  const { ending } = state;
  const action = ending
    ? `ending: ${ending.detail}`
    : input.queue.current
      ? `merging ralph/${input.queue.current} into ${state.config.branch}`
      : `${state.running.length} child run(s) running`;
  return {
    state: state.phase === "paused" ? "paused" : "running",
    iteration: state.started,
    cost_usd: spentUsd(state, input.costs),
    current_task: state.running.map((child) => child.task.id).join(", ") || null,
    last_action: action,
  };
}

/** Continuing: each child that ended DONE before but was never merged nor abandoned, with its pending task. */
export function owedMerges(earlier: readonly RunEvent[], tasks: TaskListResult): Array<{ child: string; task: Task }> {
  const settled = new Set(
    earlier
      .filter((event) => event.type === "child_merged" || event.type === "merge_abandoned")
      .map((event) => event.child),
  );
  const owed: Array<{ child: string; task: Task }> = [];
  for (const event of earlier) {
    if (event.type !== "child_ended" || event.reason !== "DONE" || settled.has(event.child as string)) continue;
    const task = tasks.ok ? tasks.tasks.find((candidate) => candidate.id === event.task && !candidate.done) : undefined;
    if (task) owed.push({ child: event.child as string, task });
  }
  return owed;
}
