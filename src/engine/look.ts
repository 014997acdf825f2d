// Reading the world at a boundary: the plan in force, the task list it names, the sentinels, and `ralph set`.
// What is read becomes inputs for step; what is worth saying about it, log lines and events.
import { resolve } from "node:path";
import type { Task, TaskListResult } from "../judge/tasks.js";
import type { RecordEntry } from "../run/run-record.js";
import type { RunPaths } from "../store/run-paths.js";
import type { EngineIo } from "./engine-io.js";
import type { Effect, Input } from "./phase.js";
import type { PlanWatch } from "./plan-watch.js";

/** Reads the control files and the task list for the driver. */
export class Looker {
  /** The last good task list (by file) and the last task-list problem logged: a broken list is tolerated like state.md. */
  private lastGoodTasks: { file: string; tasks: Task[] } | null = null;
  private tasksProblem: string | null = null;

  constructor(
    private readonly io: EngineIo,
    private readonly paths: RunPaths,
    private readonly projectDir: string,
    readonly planWatch: PlanWatch,
  ) {}

  /** The inputs a look produces, and entries to record on the way. */
  look(what: (Effect & { kind: "look" })["what"]): { inputs: Input[]; entries: RecordEntry[] } {
    const entries: RecordEntry[] = [];
    const inputs: Input[] = [];
    if (what !== "sentinels") {
      entries.push(...this.serveSetRequests());
      const read = this.planWatch.atBoundary();
      const plan = this.planWatch.plan;
      const tasks = what === "all" ? this.readTasks(plan.tasks, entries) : undefined;
      inputs.push({
        type: "desired",
        read: read.kind === "broken" ? { ok: false, message: read.message } : { ok: true, plan },
        ...(tasks !== undefined ? { tasks } : {}),
      });
    }
    const nowMs = this.io.now().getTime();
    // The budgets are checked through the spend ledger at every look: the next iteration starts only on a clear verdict.
    const budget = this.io.spend?.check(nowMs) ?? null;
    inputs.push({ type: "sentinel", ...this.io.readSentinels(this.paths), nowMs, ...(budget ? { budget } : {}) });
    return { inputs, entries };
  }

  /** Serves pending `ralph set` requests; each one is logged and published. */
  serveSetRequests(): RecordEntry[] {
    return this.planWatch.serveSetRequests().flatMap((outcome): RecordEntry[] => [
      { kind: "log", line: outcome.ok ? `ralph set: ${outcome.applied}` : `ralph set refused: ${outcome.message}` },
      {
        kind: "event",
        body: outcome.ok
          ? { type: "state_set", applied: outcome.applied }
          : { type: "state_set", refused: outcome.message },
      },
    ]);
  }

  /** The task list, or the last good one while the file is broken (logged once). */
  private readTasks(name: string | null, entries: RecordEntry[]): TaskListResult | null {
    if (!name) return null;
    const file = resolve(this.projectDir, name);
    const list = this.io.readTasks(file);
    if (list.ok) {
      if (this.tasksProblem) entries.push({ kind: "log", line: `task list ${file} is readable again` });
      this.tasksProblem = null;
      this.lastGoodTasks = { file, tasks: list.tasks };
      return list;
    }
    if (this.lastGoodTasks?.file !== file) return list;
    if (this.tasksProblem !== list.message) {
      entries.push({
        kind: "log",
        line: `ignoring task list ${file} until it is fixed (the last good version stays in force): ${list.message}`,
      });
    }
    this.tasksProblem = list.message;
    return { ok: true, format: "checklist", tasks: this.lastGoodTasks.tasks };
  }
}
