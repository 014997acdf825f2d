// The parent's merge queue: DONE children merged one at a time into the integration branch, in order of
// completion, with the parent's own copy of the task list (changed only by the merges it made).
import { parseTasks, type Task, type TaskListResult } from "../judge/tasks.js";
import { markTaskInText } from "../judge/task-text.js";
import type { Ending } from "../run/finish-run.js";
import type { RunRecord } from "../run/run-record.js";
import type { ChildHandle, ChildLimits, FanOutIo } from "./fan-out-io.js";
import { childEnding } from "./fan-out-endings.js";
import { mergeChild, resolvePrompt, type ResolveRequest } from "./merge-child.js";
import { dollars } from "../spend/spend-totals.js";

/** A DONE child waiting for its merge. */
export interface Queued {
  child: string;
  task: Task;
}

/** A resolve run under way: the fan-out passes its ending on to it as to any child. */
export interface Resolving {
  id: string;
  task: Task;
  handle: ChildHandle;
}

/** What the queue needs from its fan-out. */
export interface MergeQueueDeps {
  runId: string;
  /** The task file's path (its name decides its format) and as given (for messages). */
  file: string;
  tasksName: string;
  maxResolve: number;
  integration: { branch: string; head: string; tasksPath: string; tasksText: string };
  io: Pick<FanOutIo, "merge" | "startResolve" | "readChildStatus" | "signals" | "spend">;
  record: RunRecord;
  /** How the parent is ending, if it is. */
  ending(): Ending | null;
  /** A resolve run started: the parent's ending is passed on to it from now on. */
  resolveStarted(run: Resolving): void;
  /** The resolve run under way ended, having spent `costUsd`. */
  resolveEnded(costUsd: number): void;
  /** What a resolve run started now may use of the parent's `--max-cost` and `--max-runtime` (what is left of them). */
  limits(): ChildLimits;
  /** A task whose merge was abandoned: left pending with this reason. */
  abandoned(taskId: string, reason: string): void;
  /** A merge that failed (git refused, a record that cannot be written): the queue holds, and the parent ends. */
  failed(message: string): void;
  /** Called whenever a merge ends: the fan-out looks again. */
  wake(): void;
}

/** What the queue reports to its fan-out (the fan-out's driver makes these). */
export type MergeReports = Pick<
  MergeQueueDeps,
  "ending" | "resolveStarted" | "resolveEnded" | "limits" | "abandoned" | "failed" | "wake"
>;

/** The queue of merges into the integration branch. */
export class MergeQueue {
  private readonly items: Queued[] = [];
  private text: string;
  private merging = false;
  private held = false;
  // The last commit the parent made (or found) on its integration branch: each merge starts from it.
  private integrated: string;

  constructor(
    private readonly deps: MergeQueueDeps,
    private resolveCount: number,
  ) {
    this.text = deps.integration.tasksText;
    this.integrated = deps.integration.head;
  }

  /** The task list as the parent knows it. */
  tasks(): TaskListResult {
    return parseTasks(this.text, this.deps.file);
  }

  push(item: Queued): void {
    this.items.push(item);
  }

  /** Merges not made yet. */
  get length(): number {
    return this.items.length;
  }

  /** The child being merged now, or null. */
  get current(): string | null {
    return this.merging ? (this.items[0]?.child ?? null) : null;
  }

  /** True once a merge had to wait (a signal, or an ending that lets no resolve run): the rest waits for `continue`. */
  get waiting(): boolean {
    return this.held;
  }

  /** Stops merging (an internal failure): what is left waits for `continue`. */
  hold(): void {
    this.held = true;
  }

  /**
   * Merges the first queued child, unless a merge is under way or the queue waits; the queue goes in order of
   * completion. Never rejects: a merge that fails holds the queue and is reported (`failed`) before the fan-out
   * is woken, so it is never attempted again in this run.
   */
  async mergeNext(): Promise<void> {
    const next = this.items[0];
    const { deps } = this;
    if (this.merging || !next || this.held || deps.ending()?.reason === "INTERRUPTED") return;
    this.merging = true;
    try {
      // Whatever else wrote to the integration worktree or moved its branch since, the merge starts from the parent's commit.
      const reset = await deps.io.merge.resetTo(this.integrated);
      if (!reset.ok) throw new Error(reset.message);
      const marked = markTaskInText(this.text, deps.file, next.task.id);
      const merged = (parseTasks(this.text, deps.file) as { ok: true; tasks: Task[] }).tasks.filter(
        (task) => task.done,
      );
      const interrupted = () => deps.ending()?.reason === "INTERRUPTED" || deps.io.signals.firstSignal() !== null;
      const outcome = marked.ok
        ? await mergeChild(
            {
              child: next.child,
              branch: `ralph/${next.child}`,
              task: next.task,
              tasksText: marked.text,
              tasksPath: deps.integration.tasksPath,
              merged,
              runId: deps.runId,
            },
            {
              ...deps.io.merge,
              resolve: (request) => this.resolveOnce(request),
              interrupted,
              mayResolve: () => deps.ending() === null,
            },
            deps.maxResolve,
          )
        : ({ kind: "abandoned", reason: `${deps.tasksName} ${marked.message}`, resolves: 0 } as const);
      const { record } = deps;
      const branch = deps.integration.branch;
      switch (outcome.kind) {
        case "merged":
          this.items.shift();
          if (marked.ok) this.text = marked.text;
          this.integrated = outcome.commit;
          record.event({
            type: "child_merged",
            child: next.child,
            task: next.task.id,
            commit: outcome.commit,
            resolves: outcome.resolves,
          });
          record.log(
            `merged ralph/${next.child} into ${branch} (${outcome.commit.slice(0, 12)}${outcome.resolves > 0 ? `, after ${outcome.resolves} resolve iteration(s)` : ""}); task ${next.task.id} marked done there`,
          );
          break;
        case "abandoned":
          this.items.shift();
          deps.abandoned(next.task.id, `merge of ralph/${next.child} abandoned: ${outcome.reason}`);
          record.event({
            type: "merge_abandoned",
            child: next.child,
            task: next.task.id,
            reason: outcome.reason,
            resolves: outcome.resolves,
          });
          record.log(
            `merge of ralph/${next.child} abandoned, ${branch} left as it was; task ${next.task.id} reopened: ${outcome.reason}`,
          );
          break;
        case "interrupted":
          this.held = true;
          record.log(
            `merge of ralph/${next.child} undone: the run is ending (${deps.ending()?.detail ?? "signal"}); ralph continue ${deps.runId} makes it again`,
          );
          break;
        default: {
          const never: never = outcome;
          throw new Error(`unknown merge outcome ${String(never)}`);
        }
      }
    } catch (error) {
      this.held = true;
      deps.failed((error as Error).message ?? String(error));
    } finally {
      this.merging = false;
      deps.wake();
    }
  }

  /** Runs one resolve iteration as a run of its own on the integration worktree, and waits for its end. */
  private async resolveOnce(request: ResolveRequest): Promise<void> {
    const { deps } = this;
    this.resolveCount += 1;
    const id = `${deps.runId}-resolve-${this.resolveCount}`;
    deps.record.event({
      type: "resolve_started",
      child: id,
      for_child: request.child,
      task: request.task.id,
      attempt: request.attempt,
      conflicts: request.conflicts,
      checks_failed: request.checkOutput !== null,
    });
    const why =
      request.conflicts.length > 0
        ? `conflicts in ${request.conflicts.join(", ")}`
        : "the checks failed on the merged tree";
    deps.record.log(`resolve ${id} (${request.attempt} of at most ${deps.maxResolve}) for ${request.branch}: ${why}`);
    const handle = deps.io.startResolve(id, resolvePrompt(request, deps.integration.branch), deps.limits());
    deps.resolveStarted({ id, task: request.task, handle });
    const exit = await handle.exited;
    const status = deps.io.readChildStatus(id);
    const outcome = childEnding(status, exit);
    // What it spent is the spend ledger's figure; its status.json is in reach of its agent.
    const costUsd = deps.io.spend ? dollars(deps.io.spend.totalsOf(id)) : (status?.cost_usd ?? 0);
    deps.resolveEnded(costUsd);
    deps.record.event({
      type: "resolve_ended",
      child: id,
      for_child: request.child,
      reason: outcome.reason,
      cost_usd: costUsd,
    });
    deps.record.log(`resolve ${id} ended ${outcome.reason}`);
  }
}
