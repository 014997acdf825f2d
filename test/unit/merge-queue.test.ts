// The parent's merge queue with a fake integration branch: order, the parent's own task list, one merge at a
// time, holding, an abandoned merge and a resolve run reported to the fan-out.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import type { Ending } from "../../src/run/finish-run.js";
import type { RunRecord } from "../../src/run/run-record.js";
import type { Task } from "../../src/judge/tasks.js";
import { MergeQueue, type MergeQueueDeps } from "../../src/parallel/merge-queue.js";

const TEXT = "- [ ] first\n- [ ] second\n- [ ] third\n";

function queueWith(options: { conflictOn?: string; ending?: Ending | null; resetRefused?: boolean } = {}) {
  const merged: string[] = [];
  const abandoned: Array<[string, string]> = [];
  const resolving: Array<string | null> = [];
  /** What the queue told its fan-out of a failure, and its wakes, in order. */
  const told: string[] = [];
  const events: string[] = [];
  let conflicted: string[] = [];
  let commits = 0;
  let branch = "";
  let ending = options.ending ?? null;
  const deps: MergeQueueDeps = {
    runId: "p",
    file: "/project/TASKS.md",
    tasksName: "TASKS.md",
    maxResolve: 1,
    integration: { branch: "ralph/p", head: "c0", tasksPath: "TASKS.md", tasksText: TEXT },
    io: {
      merge: {
        head: async () => ({ ok: true, commit: `c${commits}` }),
        startMerge: async (name) => {
          branch = name;
          conflicted = name === options.conflictOn ? ["a.txt"] : [];
          return { ok: true, conflicts: conflicted };
        },
        unmerged: async () => ({ ok: true, paths: conflicted }),
        hasMarkers: (path) => conflicted.includes(path),
        stageAllBut: async (paths) => ((conflicted = paths), { ok: true }),
        writeTasks: async () => ({ ok: true }),
        commit: async () => {
          commits += 1;
          merged.push(branch);
          return { ok: true, commit: `c${commits}` };
        },
        resetTo: async () =>
          options.resetRefused ? { ok: false, message: "cannot reset" } : ((conflicted = []), { ok: true }),
        runChecks: async () => ({ passed: true, output: "" }),
      },
      startResolve: () => ({ exited: Promise.resolve({ code: 1, signal: null, stderr: "" }), signal: () => undefined }),
      readChildStatus: () => null,
      signals: {
        interrupted: new AbortController().signal,
        urgent: new AbortController().signal,
        firstSignal: () => null,
      },
    },
    record: {
      event: (event: { type: string }) => events.push(event.type),
      log: () => undefined,
    } as unknown as RunRecord,
    ending: () => ending,
    resolveStarted: (run) => resolving.push(run.id),
    resolveEnded: () => resolving.push(null),
    limits: () => ({ maxCostUsd: null, maxRuntimeMs: null }),
    abandoned: (taskId, reason) => abandoned.push([taskId, reason]),
    failed: (message) => told.push(`failed: ${message}`),
    wake: () => told.push("wake"),
  };
  const queue = new MergeQueue(deps, 0);
  const task = (title: string): Task =>
    (queue.tasks() as { ok: true; tasks: Task[] }).tasks.find((candidate) => candidate.title === title) as Task;
  return { queue, merged, abandoned, resolving, told, events, task, end: (next: Ending) => (ending = next) };
}

describe("MergeQueue", () => {
  test("merges in the order pushed, one at a time; the parent's task list marks each merged task done", async () => {
    const world = queueWith();
    world.queue.push({ child: "p-2", task: world.task("second") });
    world.queue.push({ child: "p-1", task: world.task("first") });
    const first = world.queue.mergeNext();
    assert.equal(world.queue.current, "p-2");
    await world.queue.mergeNext(); // a merge is under way: nothing more starts
    await first;
    assert.deepEqual([world.merged, world.queue.length, world.queue.current], [["ralph/p-2"], 1, null]);
    await world.queue.mergeNext();
    assert.deepEqual(world.merged, ["ralph/p-2", "ralph/p-1"]);
    const tasks = world.queue.tasks();
    assert.ok(tasks.ok);
    assert.deepEqual(
      tasks.tasks.map((task) => task.done),
      [true, true, false],
    );
    assert.deepEqual(world.events, ["child_merged", "child_merged"]);
  });

  test("a conflict its resolve run does not fix: abandoned, the task reported pending, the resolve run reported started and ended", async () => {
    const world = queueWith({ conflictOn: "ralph/p-1" });
    world.queue.push({ child: "p-1", task: world.task("first") });
    await world.queue.mergeNext();
    assert.deepEqual(world.merged, []);
    assert.deepEqual(world.abandoned, [
      ["1", "merge of ralph/p-1 abandoned: conflicts in a.txt, still after 1 resolve iteration(s)"],
    ]);
    assert.deepEqual(world.resolving, ["p-resolve-1", null]);
    assert.deepEqual(world.events, ["resolve_started", "resolve_ended", "merge_abandoned"]);
    assert.equal(world.queue.length, 0);
  });

  test("held, or the parent interrupted: nothing is merged and the queue keeps its items", async () => {
    const held = queueWith();
    held.queue.push({ child: "p-1", task: held.task("first") });
    held.queue.hold();
    await held.queue.mergeNext();
    assert.deepEqual([held.merged, held.queue.length, held.queue.waiting], [[], 1, true]);
    const interrupted = queueWith({ ending: { reason: "INTERRUPTED", detail: "received SIGINT", signal: "SIGINT" } });
    interrupted.queue.push({ child: "p-1", task: interrupted.task("first") });
    await interrupted.queue.mergeNext();
    assert.deepEqual([interrupted.merged, interrupted.queue.length], [[], 1]);
  });

  test("a conflict while the parent is ending (no agent may run): the merge waits for continue", async () => {
    const world = queueWith({ conflictOn: "ralph/p-1", ending: { reason: "STOPPED", detail: "STOP file" } });
    world.queue.push({ child: "p-1", task: world.task("first") });
    await world.queue.mergeNext();
    assert.deepEqual([world.merged, world.queue.length, world.queue.waiting, world.resolving], [[], 1, true, []]);
  });

  test("a merge that fails (git refuses the reset): the queue holds, keeps the child, and says so before it wakes the fan-out", async () => {
    const world = queueWith({ resetRefused: true });
    world.queue.push({ child: "p-1", task: world.task("first") });
    await world.queue.mergeNext();
    assert.deepEqual(world.told, ["failed: cannot reset", "wake"]);
    assert.deepEqual([world.merged, world.queue.length, world.queue.waiting], [[], 1, true]);
    // Held: it is not attempted again.
    await world.queue.mergeNext();
    assert.deepEqual(world.told, ["failed: cannot reset", "wake"]);
  });
});
