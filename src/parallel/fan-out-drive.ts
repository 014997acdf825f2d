// Drives the fan-out's pure step (fan-out-step.ts) over its outside world: it looks (signals, sentinels, the
// children's spend and questions, the task list, the merge queue) whenever something happened or a while has
// passed, performs the step's effects, and feeds back what the children and the merges report.
import type { TaskListResult, Task } from "../judge/tasks.js";
import type { RunRecord } from "../run/run-record.js";
import type { RunPaths } from "../store/run-paths.js";
import { openQuestion } from "../control/list-runs.js";
import { RunFileError } from "../store/regular-file.js";
import type { ChildHandle, FanOutIo } from "./fan-out-io.js";
import { fanOutStep, type FanOutEffect, type FanOutInput, type FanOutState, type Look, type QueueView } from "./fan-out-step.js";

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
  record: Pick<RunRecord, "apply" | "update" | "log">;
  /** When the run first started (its runtime cap counts from then). */
  startedAtMs: number;
}

/** The fan-out's driver: `post` takes what children and merges report; `run` goes to the end. */
export class FanOutDriver {
  private readonly inbox: FanOutInput[] = [];
  private readonly handles = new Map<string, ChildHandle>();
  private wake: (() => void) | null = null;
  /** Woken while not asleep: the next sleep is skipped. */
  private woken = false;

  constructor(
    public state: FanOutState,
    private readonly world: DriveWorld,
    private merges: Merges | null = null,
  ) {}

  /** Set once: the merge queue reports back to this driver. */
  attach(merges: Merges): void {
    this.merges = merges;
  }

  /** A resolve run that the merge queue started: the driver passes the parent's ending on to it too. */
  resolving(id: string, task: Task, handle: ChildHandle): void {
    this.handles.set(id, handle);
    this.post({ type: "resolveStarted", id, task });
  }

  post(input: FanOutInput): void {
    this.inbox.push(input);
    this.nudge();
  }

  /** Something changed outside (a merge ended): look again now. */
  nudge(): void {
    if (this.wake) this.wake();
    else this.woken = true;
  }

  /** Steps until the parent has ended; resolves to its last state. */
  async run(): Promise<FanOutState> {
    const { signals } = this.world.io;
    const onSignal = () => this.nudge();
    signals.interrupted.addEventListener("abort", onSignal);
    signals.urgent.addEventListener("abort", onSignal);
    try {
      for (;;) {
        while (this.inbox.length > 0) this.apply(this.inbox.shift() as FanOutInput);
        this.apply(this.look());
        if (this.state.phase === "ended") return this.state;
        if (this.inbox.length === 0 && !this.woken) await this.sleep();
        this.woken = false;
      }
    } finally {
      signals.interrupted.removeEventListener("abort", onSignal);
      signals.urgent.removeEventListener("abort", onSignal);
    }
  }

  /** The queue as it stands now. */
  queue(): QueueView {
    const merges = this.mergesOrThrow();
    return { length: merges.length, current: merges.current, waiting: merges.waiting };
  }

  private mergesOrThrow(): Merges {
    if (!this.merges) throw new Error("the fan-out driver has no merge queue");
    return this.merges;
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

  private look(): Look {
    const { io, paths, startedAtMs } = this.world;
    const costs: Record<string, number> = {};
    const questions: Record<string, string | null> = {};
    for (const child of this.state.running) {
      const status = io.readChildStatus(child.id);
      costs[child.id] = status?.cost_usd ?? 0;
      questions[child.id] = openQuestion(status);
    }
    return {
      type: "look",
      signal: io.signals.firstSignal(),
      urgent: io.signals.urgent.aborted,
      sentinels: io.readSentinels(paths),
      elapsedMs: io.now().getTime() - startedAtMs,
      costs,
      questions,
      tasks: this.mergesOrThrow().tasks(),
      queue: this.queue(),
    };
  }

  private apply(input: FanOutInput): void {
    const { state, effects } = fanOutStep(this.state, input);
    this.state = state;
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
      this.post({ type: "lost", id: effect.kind === "start" ? effect.start.childId : null, detail: failureDetail(error) });
    }
  }

  private performOne(effect: FanOutEffect): void {
    const { io, record } = this.world;
    switch (effect.kind) {
      case "start": {
        const id = effect.start.childId;
        const handle = io.startChild(effect.start);
        this.handles.set(id, handle);
        // `exited` never rejects (a child that cannot start exits with what it said).
        void handle.exited.then((exit) => this.post({ type: "exited", id, exit, status: io.readChildStatus(id) }));
        return;
      }
      case "signal":
        this.handles.get(effect.id)?.signal(effect.signal);
        return;
      case "stop":
        if (io.stopChild(effect.id, effect.now)) this.apply({ type: "stopped", id: effect.id, level: effect.now ? "now" : "stop" });
        return;
      case "queue":
        this.mergesOrThrow().push({ child: effect.child, task: effect.task });
        return;
      case "merge":
        this.mergesOrThrow()
          .mergeNext()
          .catch((error: unknown) => this.post({ type: "mergeFailed", message: (error as Error).message ?? String(error) }));
        return;
      case "hold":
        this.mergesOrThrow().hold();
        return;
      case "relay":
        record.log(`child ${effect.id} asks: ${JSON.stringify(effect.question)}; it waits for: ralph answer ${effect.id} TEXT`);
        return;
      case "record":
        record.apply([effect.entry]);
        return;
      case "status":
        record.update(effect.patch);
        return;
      case "end":
        return;
      default: {
        const unreachable: never = effect;
        throw new Error(`unknown fan-out effect ${JSON.stringify(unreachable)}`);
      }
    }
  }
}

/** The ending's detail for an effect that failed: a run file that is not what it should be is named as such, not as a bug. */
function failureDetail(error: unknown): string {
  const message = (error as Error).message ?? String(error);
  return error instanceof RunFileError ? message : `internal error: ${message}`;
}
