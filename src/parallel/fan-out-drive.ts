// Drives the fan-out's pure step (fan-out-step.ts) over its outside world: it looks (signals, sentinels, the
// children's spend and questions, the task list, the merge queue) whenever something happened or a while has
// passed, performs the step's effects, and feeds back what the children and the merges report.
import type { TaskListResult, Task } from "../judge/tasks.js";
import type { RunRecord } from "../run/run-record.js";
import type { RunPaths } from "../store/run-paths.js";
import { openQuestion } from "../control/list-runs.js";
import { RunFileError } from "../store/regular-file.js";
import type { Ending } from "../run/finish-run.js";
import type { ChildExit, ChildHandle, FanOutIo } from "./fan-out-io.js";
import { dollars } from "../spend/spend-totals.js";
import {
  fanOutStep,
  shareOfLimits,
  type FanOutEffect,
  type FanOutInput,
  type FanOutState,
  type Look,
} from "./fan-out-step.js";
import type { MergeReports } from "./merge-queue.js";

/** How often the parent looks at its sentinels, limits and children's spend while nothing wakes it. */
const LOOK_MS = 200;

/** The merges as the driver uses them (MergeQueue). */
export interface Merges {
  tasks(): TaskListResult;
  push(item: { child: string; task: Task }): void;
  mergeNext(): Promise<void>;
  hold(): void;
  readonly length: number;
  readonly current: string | null;
  readonly waiting: boolean;
}

/** What the driver works with besides the step. */
export interface DriveWorld {
  io: FanOutIo;
  paths: RunPaths;
  record: Pick<RunRecord, "apply" | "update" | "guard">;
  /** When this start of the run began (its runtime cap counts from then). */
  startedAtMs: number;
}

/**
 * The fan-out's driver: everything the children and the merges report becomes an input of the step (`post`);
 * `run` steps until the step's `end`.
 */
export class FanOutDriver {
  /** The merges, made by the driver's caller with the driver's reports (MergeQueue). */
  readonly merges: Merges;
  private current: FanOutState;
  private readonly inbox: FanOutInput[] = [];
  /** The children and resolve runs not yet gone: a handle is dropped once its run has exited. */
  private readonly handles = new Map<string, ChildHandle>();
  /** The merges started and not yet settled. */
  private readonly merging = new Set<Promise<void>>();
  /** The step's `end`, once it came. */
  private ended: Ending | null = null;
  private wake: (() => void) | null = null;
  /** Woken while not asleep: the next sleep is skipped. */
  private woken = false;

  constructor(
    state: FanOutState,
    private readonly world: DriveWorld,
    makeMerges: (reports: MergeReports) => Merges,
  ) {
    this.current = state;
    this.merges = makeMerges({
      ending: () => this.current.ending,
      resolveStarted: ({ id, task, handle }) => {
        // A resolve run is passed the parent's ending as any child is.
        void this.track(id, handle);
        this.post({ type: "resolveStarted", id, task });
      },
      resolveEnded: (costUsd) => this.post({ type: "resolveEnded", costUsd }),
      limits: () => shareOfLimits(this.current, this.costs(), this.world.io.now().getTime() - this.world.startedAtMs),
      abandoned: (taskId, reason) => this.post({ type: "abandoned", taskId, reason }),
      failed: (message) => this.post({ type: "mergeFailed", message }),
      wake: () => this.nudge(),
    });
  }

  /** The step's state. */
  get state(): FanOutState {
    return this.current;
  }

  /** An input for the step: taken at the next turn, which comes at once. */
  post(input: FanOutInput): void {
    this.inbox.push(input);
    this.nudge();
  }

  /** Steps until the parent has ended; resolves to its ending. */
  async run(): Promise<Ending> {
    const { signals } = this.world.io;
    const onSignal = () => this.nudge();
    signals.interrupted.addEventListener("abort", onSignal);
    signals.urgent.addEventListener("abort", onSignal);
    try {
      for (;;) {
        while (this.inbox.length > 0) this.apply(this.inbox.shift() as FanOutInput);
        this.apply(this.look());
        if (this.ended) return this.ended;
        if (this.inbox.length === 0 && !this.woken) await this.sleep();
        this.woken = false;
      }
    } finally {
      signals.interrupted.removeEventListener("abort", onSignal);
      signals.urgent.removeEventListener("abort", onSignal);
    }
  }

  /**
   * After a failure the step could not take (a throw while looking): ends every child and resolve run still
   * there and waits for them and for the merge under way, so that nothing of the run outlives its end.
   */
  async abandon(ending: Ending): Promise<void> {
    this.current = { ...this.current, ending: this.current.ending ?? ending, phase: "ended" };
    this.merges.hold();
    const gone = [...this.handles.values()].map((handle) => {
      try {
        handle.signal("SIGTERM");
      } catch {
        // it is waited for all the same
      }
      return handle.exited.catch(() => undefined);
    });
    await Promise.all([...gone, ...this.merging]);
  }

  /** Something changed outside (a merge ended, a signal): look again now. */
  private nudge(): void {
    if (this.wake) this.wake();
    else this.woken = true;
  }

  private sleep(): Promise<void> {
    return new Promise<void>((done) => {
      const timer = setTimeout(() => {
        this.wake = null;
        done();
      }, LOOK_MS);
      this.wake = () => {
        clearTimeout(timer);
        this.wake = null;
        done();
      };
    });
  }

  /** What each running child and the resolve run under way spent so far. */
  private costs(): Record<string, number> {
    const { io } = this.world;
    const costs: Record<string, number> = {};
    const { running, resolving } = this.current;
    for (const child of resolving ? [...running, resolving] : running) {
      // What a child spent is the spend ledger's figure; its status.json is in reach of its agent.
      costs[child.id] = io.spend ? dollars(io.spend.totalsOf(child.id)) : (io.readChildStatus(child.id)?.cost_usd ?? 0);
    }
    return costs;
  }

  private look(): Look {
    const { io, paths, startedAtMs } = this.world;
    const costs = this.costs();
    const questions: Record<string, string | null> = {};
    for (const child of this.current.running) questions[child.id] = openQuestion(io.readChildStatus(child.id));
    return {
      type: "look",
      signal: io.signals.firstSignal(),
      urgent: io.signals.urgent.aborted,
      sentinels: io.readSentinels(paths),
      elapsedMs: io.now().getTime() - startedAtMs,
      recordFailure: this.world.record.guard.failure,
      costs,
      questions,
      tasks: this.merges.tasks(),
      queue: { length: this.merges.length, current: this.merges.current, waiting: this.merges.waiting },
    };
  }

  private apply(input: FanOutInput): void {
    const { state, effects } = fanOutStep(this.current, input);
    this.current = state;
    for (const effect of effects) this.perform(effect);
  }

  /**
   * Performs one effect. One that fails (a run file an agent swapped for a link) is the run's failure, fed back
   * as `lost`: the parent still passes its ending on to its children, and the run still ends and is marked.
   */
  private perform(effect: FanOutEffect): void {
    try {
      this.performOne(effect);
    } catch (error) {
      this.post({
        type: "lost",
        id: effect.kind === "start" ? effect.start.childId : null,
        detail: failureDetail(error),
      });
    }
  }

  /** Holds `handle` until its run has exited; resolves to how it exited (never rejects). */
  private track(id: string, handle: ChildHandle): Promise<ChildExit> {
    this.handles.set(id, handle);
    return (
      handle.exited
        // `exited` is not meant to reject (a child that cannot start exits with what it said); if it did, the run is gone all the same.
        .catch((error: unknown): ChildExit => ({
          code: null,
          signal: null,
          stderr: (error as Error).message ?? String(error),
        }))
        .finally(() => this.handles.delete(id))
    );
  }

  private performOne(effect: FanOutEffect): void {
    const { io, record } = this.world;
    const { merges } = this;
    switch (effect.kind) {
      case "start": {
        const id = effect.start.childId;
        void this.track(id, io.startChild(effect.start)).then((exit) =>
          this.post({
            type: "exited",
            id,
            exit,
            status: io.readChildStatus(id),
            ...(io.spend ? { costUsd: dollars(io.spend.totalsOf(id)) } : {}),
          }),
        );
        return;
      }
      case "signal":
        this.handles.get(effect.id)?.signal(effect.signal);
        return;
      case "stop":
        if (io.stopChild(effect.id, effect.now))
          this.post({ type: "stopped", id: effect.id, level: effect.now ? "now" : "stop" });
        return;
      case "queue":
        merges.push({ child: effect.child, task: effect.task });
        return;
      case "merge": {
        const merging = merges.mergeNext().finally(() => this.merging.delete(merging));
        this.merging.add(merging);
        return;
      }
      case "hold":
        merges.hold();
        return;
      case "record":
        record.apply([effect.entry]);
        return;
      case "status":
        record.update(effect.patch);
        return;
      case "end":
        this.ended = effect.ending;
        return;
      default: {
        const unreachable: never = effect;
        throw new Error(`unknown fan-out effect ${JSON.stringify(unreachable)}`);
      }
    }
  }
}

/** The ending's detail for a failure: a run file that is not what it should be is named as such, not as a bug. */
export function failureDetail(error: unknown): string {
  const message = (error as Error).message ?? String(error);
  return error instanceof RunFileError ? message : `internal error: ${message}`;
}
