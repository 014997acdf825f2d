// The `--parallel` parent's pure step, table-driven as the engine's: every phase × every input, then the rules
// that matter most: which tasks start, merge order, a child's failure, a failed merge, budget, stop and signals.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import type { Task } from "../../src/judge/tasks.js";
import type { RunStatus } from "../../src/store/status-file.js";
import {
  fanOutStep,
  initialFanOut,
  owedMerges,
  shareOfLimits,
  spentUsd,
  type FanOutConfig,
  type FanOutEffect,
  type FanOutInput,
  type FanOutPhase,
  type FanOutState,
  type Look,
} from "../../src/parallel/fan-out-step.js";
import type { RunEvent } from "../../src/store/event-log.js";

const CONFIG: FanOutConfig = {
  runId: "p",
  parallel: 2,
  tasksName: "prd.json",
  branch: "ralph/p",
  maxCostUsd: null,
  maxRuntimeMs: null,
  spentBefore: 0,
};
const task = (id: string, done = false, priority = Number(id.slice(1))): Task => ({
  id,
  title: `task ${id}`,
  done,
  priority,
});
const TASKS = [task("T1"), task("T2"), task("T3")];

const look = (patch: Partial<Look> = {}, sentinels: Partial<Look["sentinels"]> = {}): Look => ({
  type: "look",
  signal: null,
  urgent: false,
  sentinels: { stop: false, stopNow: false, pause: false, answer: null, ...sentinels },
  elapsedMs: 1000,
  recordFailure: null,
  costs: {},
  questions: {},
  tasks: { ok: true, format: "prd", tasks: TASKS },
  queue: { length: 0, current: null, waiting: false },
  ...patch,
});
const status = (reason: string, costUsd = 0.5): RunStatus =>
  ({ exit_reason: reason, last_action: `ended ${reason}`, cost_usd: costUsd }) as unknown as RunStatus;
const exited = (id: string, reason: string | null, costUsd = 0.5): FanOutInput => ({
  type: "exited",
  id,
  exit: { code: reason === "DONE" ? 0 : 1, signal: null, stderr: reason ? "" : "ralph: bad flag\n" },
  status: reason ? status(reason, costUsd) : null,
});

/** A parent with children `ids` running on the first tasks, in `phase`. */
function withRunning(
  phase: FanOutPhase,
  ids: string[] = ["p-1", "p-2"],
  patch: Partial<FanOutState> = {},
): FanOutState {
  const running = ids.map((id, index) => ({ id, task: TASKS[index] as Task, stopAsked: "none" as const }));
  const ending = phase === "ending" || phase === "ended" ? { reason: "STOPPED" as const, detail: "STOP file" } : null;
  return { ...initialFanOut(CONFIG, ids.length), phase, running, ending, ...patch };
}

const kinds = (effects: FanOutEffect[]) => effects.map((effect) => effect.kind);
const of = <K extends FanOutEffect["kind"]>(effects: FanOutEffect[], kind: K) =>
  effects.filter((effect): effect is Extract<FanOutEffect, { kind: K }> => effect.kind === kind);
const logs = (effects: FanOutEffect[]) =>
  of(effects, "record").flatMap((effect) => (effect.entry.kind === "log" ? [effect.entry.line] : []));

describe("fan-out step: every phase × every input", () => {
  const inputs: Array<[string, FanOutInput]> = [
    ["look", look()],
    ["exited", exited("p-1", "DONE")],
    ["lost", { type: "lost", id: "p-1", detail: "internal error: disk gone" }],
    ["resolveStarted", { type: "resolveStarted", id: "p-resolve-1", task: TASKS[0] as Task }],
    ["resolveEnded", { type: "resolveEnded", costUsd: 0.25 }],
    ["abandoned", { type: "abandoned", taskId: "T1", reason: "conflicts left" }],
    ["mergeFailed", { type: "mergeFailed", message: "git gone" }],
    ["stopped", { type: "stopped", id: "p-1", level: "stop" }],
    ["owed", { type: "owed", child: "p-0", task: TASKS[2] as Task }],
  ];
  // phase, input → the phase after, and the effects' kinds.
  const table: Record<FanOutPhase, Record<string, [FanOutPhase, string[]]>> = {
    running: {
      look: ["running", ["merge", "status"]],
      exited: ["running", ["queue", "record", "record", "record"]],
      lost: ["ending", []],
      resolveStarted: ["running", []],
      resolveEnded: ["running", []],
      abandoned: ["running", []],
      mergeFailed: ["ending", ["hold"]],
      stopped: ["running", []],
      owed: ["running", ["queue", "record"]],
    },
    paused: {
      // PAUSE is gone in this look: the parent resumes, and starts nothing new while two children run.
      look: ["running", ["record", "record", "merge", "status"]],
      exited: ["paused", ["queue", "record", "record", "record"]],
      lost: ["ending", []],
      resolveStarted: ["paused", []],
      resolveEnded: ["paused", []],
      abandoned: ["paused", []],
      mergeFailed: ["ending", ["hold"]],
      stopped: ["paused", []],
      owed: ["paused", ["queue", "record"]],
    },
    ending: {
      look: ["ending", ["stop", "stop", "merge", "status"]],
      exited: ["ending", ["queue", "record", "record", "record"]],
      lost: ["ending", []],
      resolveStarted: ["ending", ["stop", "stop", "stop"]],
      resolveEnded: ["ending", []],
      abandoned: ["ending", []],
      mergeFailed: ["ending", ["hold"]],
      stopped: ["ending", []],
      owed: ["ending", ["queue", "record"]],
    },
    ended: Object.fromEntries(inputs.map(([name]) => [name, ["ended", []]])) as Record<string, [FanOutPhase, string[]]>,
  };
  for (const phase of Object.keys(table) as FanOutPhase[]) {
    for (const [name, input] of inputs) {
      test(`${phase} × ${name}`, () => {
        const [after, effects] = table[phase][name] as [FanOutPhase, string[]];
        const step = fanOutStep(withRunning(phase), input);
        assert.equal(step.state.phase, after);
        assert.deepEqual(kinds(step.effects), effects);
      });
    }
  }
});

describe("fan-out step: the rules", () => {
  test("a look starts children up to --parallel on the first pending tasks, each with what is left of the limits", () => {
    const config = { ...CONFIG, maxCostUsd: 2, maxRuntimeMs: 60_000, spentBefore: 0.5 };
    const step = fanOutStep(
      initialFanOut(config, 0),
      look({
        elapsedMs: 10_000,
        tasks: { ok: true, format: "prd", tasks: [task("T1", true), task("T3"), task("T2")] },
      }),
    );
    assert.deepEqual(
      of(step.effects, "start").map((effect) => effect.start),
      [
        { childId: "p-1", taskId: "T2", maxCostUsd: 1.5, maxRuntimeMs: 50_000 },
        { childId: "p-2", taskId: "T3", maxCostUsd: 1.5, maxRuntimeMs: 50_000 },
      ],
    );
    assert.deepEqual(
      step.state.running.map((child) => child.id),
      ["p-1", "p-2"],
    );
    assert.deepEqual(logs(step.effects), [
      "child p-1 started on task T2: task T2 (branch ralph/p-1)",
      "child p-2 started on task T3: task T3 (branch ralph/p-2)",
    ]);
  });

  test("a task whose child ended here, DONE or not, is not started again; nothing left and nothing failed: DONE", () => {
    let state = withRunning("running", ["p-1"]);
    state = fanOutStep(state, exited("p-1", "DONE")).state;
    state = fanOutStep(state, exited("p-2", "FAILED")).state; // not running: ignored
    const tasks = { ok: true as const, format: "prd" as const, tasks: [task("T1")] };
    const step = fanOutStep(state, look({ tasks }));
    assert.deepEqual(of(step.effects, "start"), []);
    assert.deepEqual(of(step.effects, "end"), [
      { kind: "end", ending: { reason: "DONE", detail: "the children finished every task in prd.json" } },
    ]);
    assert.equal(step.state.phase, "ended");
  });

  test("a list with nothing open when the parent starts: NO_WORK, no child started", () => {
    const step = fanOutStep(
      initialFanOut(CONFIG, 0),
      look({ tasks: { ok: true, format: "prd", tasks: [task("T1", true)] } }),
    );
    assert.deepEqual(of(step.effects, "start"), []);
    assert.deepEqual(of(step.effects, "end"), [
      { kind: "end", ending: { reason: "NO_WORK", detail: "every task in prd.json was already done" } },
    ]);
  });

  test("merge order: DONE children are queued in the order they ended, not the order they started", () => {
    let state = withRunning("running", ["p-1", "p-2"]);
    const second = fanOutStep(state, exited("p-2", "DONE"));
    state = second.state;
    const first = fanOutStep(state, exited("p-1", "DONE"));
    assert.deepEqual(
      [...of(second.effects, "queue"), ...of(first.effects, "queue")].map((effect) => effect.child),
      ["p-2", "p-1"],
    );
    // While a merge is queued or under way the parent does not end, even with nothing running.
    const waiting = fanOutStep(
      first.state,
      look({
        tasks: { ok: true, format: "prd", tasks: TASKS.slice(0, 2) },
        queue: { length: 2, current: "p-2", waiting: false },
      }),
    );
    assert.equal(waiting.state.phase, "running");
    assert.deepEqual(kinds(waiting.effects), ["merge", "status"]);
  });

  test("a child's failure leaves its task pending with the reason; the parent ends FAILED naming it", () => {
    const failed = fanOutStep(withRunning("running", ["p-1"]), exited("p-1", null));
    assert.deepEqual(of(failed.effects, "queue"), []);
    assert.deepEqual(logs(failed.effects), [
      "child p-1 ended NOT_STARTED; task T1 stays pending: it could not start (exit 1): bad flag",
    ]);
    const end = fanOutStep(failed.state, look({ tasks: { ok: true, format: "prd", tasks: [task("T1")] } }));
    assert.deepEqual(of(end.effects, "end")[0]?.ending, {
      reason: "FAILED",
      detail: "1 task(s) left pending: child p-1 ended NOT_STARTED: it could not start (exit 1): bad flag",
    });
  });

  test("conflicts: an abandoned merge leaves its task pending, and the parent ends FAILED", () => {
    let state = fanOutStep(withRunning("running", ["p-1"]), exited("p-1", "DONE")).state;
    state = fanOutStep(state, {
      type: "abandoned",
      taskId: "T1",
      reason: "merge of ralph/p-1 abandoned: conflicts in a.txt",
    }).state;
    const end = fanOutStep(state, look({ tasks: { ok: true, format: "prd", tasks: [task("T1")] } }));
    assert.deepEqual(of(end.effects, "end")[0]?.ending, {
      reason: "FAILED",
      detail: "1 task(s) left pending: merge of ralph/p-1 abandoned: conflicts in a.txt",
    });
  });

  test("a failed merge holds the queue and ends the parent FAILED; the merges still owed wait for continue", () => {
    const step = fanOutStep(withRunning("running", []), { type: "mergeFailed", message: "cannot reset" });
    assert.deepEqual(step.state.ending, { reason: "FAILED", detail: "integration branch ralph/p: cannot reset" });
    const end = fanOutStep(step.state, look({ queue: { length: 1, current: null, waiting: true } }));
    assert.equal(end.state.phase, "ended");
  });

  test("budget: the children's spend so far counts; over --max-cost the parent stops its children at their boundary", () => {
    const state = {
      ...withRunning("running", ["p-1", "p-2"]),
      config: { ...CONFIG, maxCostUsd: 1, spentBefore: 0.25 },
      ended: [{ id: "p-0", taskId: "T0", costUsd: 0.25 }],
    };
    assert.equal(spentUsd(state, { "p-1": 0.25, "p-2": 0.25 }), 1);
    const step = fanOutStep(state, look({ costs: { "p-1": 0.25, "p-2": 0.25 } }));
    assert.equal(step.state.ending?.reason, "BUDGET_EXCEEDED");
    assert.deepEqual(of(step.effects, "stop"), [
      { kind: "stop", id: "p-1", now: false },
      { kind: "stop", id: "p-2", now: false },
    ]);
    assert.deepEqual(of(step.effects, "start"), []);
    // A stop made is not made again; one whose run directory is not there yet is tried again at the next look.
    const next = fanOutStep(
      fanOutStep(step.state, { type: "stopped", id: "p-1", level: "stop" }).state,
      look({ costs: { "p-1": 0.25, "p-2": 0.25 } }),
    );
    assert.deepEqual(of(next.effects, "stop"), [{ kind: "stop", id: "p-2", now: false }]);
  });

  test("runtime: a child gets at least a second, and the parent ends at its cap", () => {
    const config = { ...CONFIG, maxRuntimeMs: 60_000 };
    // What is left, in whole seconds rounded down: a child never outlives the parent's cap (but by its one second).
    const early = fanOutStep(initialFanOut(config, 0), look({ elapsedMs: 10_500 }));
    assert.deepEqual(
      of(early.effects, "start").map((effect) => effect.start.maxRuntimeMs),
      [49_000, 49_000],
    );
    const start = fanOutStep(initialFanOut(config, 0), look({ elapsedMs: 59_900 }));
    assert.equal(of(start.effects, "start")[0]?.start.maxRuntimeMs, 1000);
    const end = fanOutStep(start.state, look({ elapsedMs: 60_000 }));
    assert.equal(end.state.ending?.reason, "RUNTIME_EXCEEDED");
  });

  test("stop: STOP ends the parent STOPPED, each child stopped at its boundary; stop --now ends their agents at once", () => {
    const stop = fanOutStep(withRunning("running", ["p-1"]), look({}, { stop: true }));
    assert.equal(stop.state.ending?.reason, "STOPPED");
    assert.deepEqual(of(stop.effects, "stop"), [{ kind: "stop", id: "p-1", now: false }]);
    const stopped = fanOutStep(stop.state, { type: "stopped", id: "p-1", level: "stop" }).state;
    const now = fanOutStep(stopped, look({}, { stop: true, stopNow: true }));
    assert.deepEqual(of(now.effects, "stop"), [{ kind: "stop", id: "p-1", now: true }]);
  });

  test("a signal replaces any other ending and is passed on once; a second signal is passed on again; merges wait", () => {
    const stopping = withRunning("ending", ["p-1"]);
    const first = fanOutStep(stopping, look({ signal: "SIGINT" }));
    assert.deepEqual(first.state.ending, { reason: "INTERRUPTED", detail: "received SIGINT", signal: "SIGINT" });
    assert.deepEqual(of(first.effects, "signal"), [{ kind: "signal", id: "p-1", signal: "SIGINT" }]);
    const again = fanOutStep(first.state, look({ signal: "SIGINT" }));
    assert.deepEqual(of(again.effects, "signal"), []);
    const urgent = fanOutStep(again.state, look({ signal: "SIGINT", urgent: true }));
    assert.deepEqual(of(urgent.effects, "signal"), [{ kind: "signal", id: "p-1", signal: "SIGINT" }]);
    // Once the child is gone the parent ends at once, whatever is queued: continue merges it.
    const gone = fanOutStep(
      fanOutStep(urgent.state, exited("p-1", "INTERRUPTED")).state,
      look({ signal: "SIGINT", queue: { length: 1, current: null, waiting: false } }),
    );
    assert.equal(gone.state.phase, "ended");
  });

  test("pause: no child starts while PAUSE is there, and the pause and resume are recorded once each", () => {
    const paused = fanOutStep(initialFanOut(CONFIG, 0), look({}, { pause: true }));
    assert.equal(paused.state.phase, "paused");
    assert.deepEqual(of(paused.effects, "start"), []);
    assert.deepEqual(logs(paused.effects), [
      "paused: no new child run starts until PAUSE is removed (running children go on; pause them one by one)",
    ]);
    assert.deepEqual(logs(fanOutStep(paused.state, look({}, { pause: true })).effects), []);
    assert.equal(of(paused.effects, "status")[0]?.patch.state, "paused");
  });

  test("questions: each child's open question is relayed once", () => {
    const state = withRunning("running", ["p-1", "p-2"]);
    const asked = fanOutStep(state, look({ questions: { "p-1": "Which database?", "p-2": null } }));
    assert.deepEqual(logs(asked.effects), ['child p-1 asks: "Which database?"; it waits for: ralph answer p-1 TEXT']);
    assert.deepEqual(logs(fanOutStep(asked.state, look({ questions: { "p-1": "Which database?" } })).effects), []);
  });

  test("status.json is written only when it would say something new", () => {
    const first = fanOutStep(withRunning("running"), look());
    assert.equal(of(first.effects, "status").length, 1);
    assert.equal(of(fanOutStep(first.state, look()).effects, "status").length, 0);
  });

  test("a record write that failed (a full disk) ends the parent FAILED with it, before STOP or a limit", () => {
    const step = fanOutStep(withRunning("running", ["p-1"]), look({ recordFailure: "disk full" }, { stop: true }));
    assert.deepEqual(step.state.ending, { reason: "FAILED", detail: "disk full" });
    assert.deepEqual(of(step.effects, "stop"), [{ kind: "stop", id: "p-1", now: false }]);
    assert.deepEqual(of(step.effects, "start"), []);
  });

  test("a task list the parent cannot read ends it FAILED", () => {
    const step = fanOutStep(
      initialFanOut(CONFIG, 0),
      look({ tasks: { ok: false, file: "prd.json", message: "not JSON" } }),
    );
    assert.deepEqual(step.state.ending, { reason: "FAILED", detail: "task list prd.json: not JSON" });
  });

  test("continuing: the merges owed are those of DONE children neither merged nor abandoned, on tasks still pending", () => {
    const events = [
      { type: "child_ended", child: "p-1", task: "T1", reason: "DONE" },
      { type: "child_ended", child: "p-2", task: "T2", reason: "DONE" },
      { type: "child_ended", child: "p-3", task: "T3", reason: "FAILED" },
      { type: "child_merged", child: "p-2" },
    ] as unknown as RunEvent[];
    assert.deepEqual(owedMerges(events, { ok: true, format: "prd", tasks: TASKS }), [{ child: "p-1", task: TASKS[0] }]);
  });

  test("continuing: an owed merge is queued before any look, and its task counts as ended here (never started again)", () => {
    const owed = fanOutStep(initialFanOut(CONFIG, 3), { type: "owed", child: "p-1", task: TASKS[0] as Task });
    assert.deepEqual(of(owed.effects, "queue"), [{ kind: "queue", child: "p-1", task: TASKS[0] }]);
    assert.deepEqual(logs(owed.effects), ["child p-1 ended DONE before; its merge into ralph/p is made now"]);
    const next = fanOutStep(owed.state, look({ queue: { length: 1, current: null, waiting: false } }));
    assert.deepEqual(
      of(next.effects, "start").map((effect) => [effect.start.childId, effect.start.taskId]),
      [
        ["p-4", "T2"],
        ["p-5", "T3"],
      ],
    );
  });

  test("a child's end is recorded with its reason, exit code, detail and spend, and its spend counts from then on", () => {
    const step = fanOutStep(withRunning("running", ["p-1", "p-2"]), exited("p-2", "FAILED", 0.75));
    assert.deepEqual(
      step.state.running.map((child) => child.id),
      ["p-1"],
    );
    assert.deepEqual(step.state.ended, [{ id: "p-2", taskId: "T2", costUsd: 0.75 }]);
    assert.deepEqual(step.state.failed, [{ taskId: "T2", reason: "child p-2 ended FAILED: ended FAILED" }]);
    assert.deepEqual(
      of(step.effects, "record").map((effect) => effect.entry),
      [
        {
          kind: "event",
          body: {
            type: "child_ended",
            child: "p-2",
            task: "T2",
            reason: "FAILED",
            exit_code: 1,
            detail: "ended FAILED",
            cost_usd: 0.75,
          },
        },
        {
          kind: "progress",
          block: [
            ["child", "p-2"],
            ["task", "T2"],
            ["child_reason", "FAILED"],
            ["child_detail", "ended FAILED"],
            ["cost_usd", 0.75],
          ],
        },
        { kind: "log", line: "child p-2 ended FAILED; task T2 stays pending: ended FAILED" },
      ],
    );
    assert.equal(spentUsd(step.state, { "p-1": 0.25 }), 1);
    // A DONE child's merge is queued, and its log says it waits for it.
    const done = fanOutStep(withRunning("running", ["p-1"]), exited("p-1", "DONE"));
    assert.deepEqual(of(done.effects, "queue"), [{ kind: "queue", child: "p-1", task: TASKS[0] }]);
    assert.deepEqual(logs(done.effects), ["child p-1 ended DONE; task T1 waits to be merged into ralph/p"]);
  });

  test("an effect that failed (lost) ends the parent FAILED with its detail, the child it was starting gone, the others stopped", () => {
    const lost = fanOutStep(withRunning("running", ["p-1", "p-2"]), {
      type: "lost",
      id: "p-2",
      detail: "run.log: is a symbolic link",
    });
    assert.deepEqual(lost.state.ending, { reason: "FAILED", detail: "run.log: is a symbolic link" });
    assert.deepEqual(
      lost.state.running.map((child) => child.id),
      ["p-1"],
    );
    const next = fanOutStep(lost.state, look());
    assert.deepEqual(of(next.effects, "stop"), [{ kind: "stop", id: "p-1", now: false }]);
    assert.deepEqual(of(next.effects, "start"), []);
    // An ending already decided is kept.
    assert.deepEqual(fanOutStep(withRunning("ending"), { type: "lost", id: null, detail: "x" }).state.ending, {
      reason: "STOPPED",
      detail: "STOP file",
    });
  });

  test("a resolve run: the parent's ending is passed on to it, and its spend counts once it ended", () => {
    const started = fanOutStep(withRunning("ending", []), {
      type: "resolveStarted",
      id: "p-resolve-1",
      task: TASKS[0] as Task,
    });
    assert.deepEqual(started.effects, [{ kind: "stop", id: "p-resolve-1", now: false }]);
    const ended = fanOutStep(started.state, { type: "resolveEnded", costUsd: 0.25 });
    assert.equal(ended.state.resolving, null);
    assert.deepEqual(ended.state.ended, [{ id: "p-resolve-1", taskId: "T1", costUsd: 0.25 }]);
    assert.equal(spentUsd(ended.state, {}), 0.25);
    // A signal reaches it as it reaches every child.
    const signalled = fanOutStep(
      fanOutStep(withRunning("running", []), { type: "resolveStarted", id: "p-resolve-2", task: TASKS[0] as Task })
        .state,
      look({ signal: "SIGTERM" }),
    );
    assert.deepEqual(of(signalled.effects, "signal"), [{ kind: "signal", id: "p-resolve-2", signal: "SIGTERM" }]);
  });

  test("a resolve run's spend counts toward --max-cost while it runs: over the budget, it is stopped at its boundary", () => {
    const state = {
      ...withRunning("running", ["p-2"]),
      config: { ...CONFIG, maxCostUsd: 1 },
      ended: [{ id: "p-1", taskId: "T1", costUsd: 0.5 }],
    };
    const resolving = fanOutStep(state, { type: "resolveStarted", id: "p-resolve-1", task: TASKS[0] as Task }).state;
    assert.equal(spentUsd(resolving, { "p-2": 0.1, "p-resolve-1": 0.4 }), 1);
    const step = fanOutStep(resolving, look({ costs: { "p-2": 0.1, "p-resolve-1": 0.4 } }));
    assert.equal(step.state.ending?.reason, "BUDGET_EXCEEDED");
    assert.deepEqual(of(step.effects, "stop"), [
      { kind: "stop", id: "p-2", now: false },
      { kind: "stop", id: "p-resolve-1", now: false },
    ]);
  });

  test("a resolve run's share of the limits is what is left of them, as a child's is", () => {
    const state = {
      ...withRunning("running", ["p-2"]),
      config: { ...CONFIG, maxCostUsd: 1, maxRuntimeMs: 600_000 },
      ended: [{ id: "p-1", taskId: "T1", costUsd: 0.25 }],
    };
    assert.deepEqual(shareOfLimits(state, { "p-2": 0.25 }, 250_400), { maxCostUsd: 0.5, maxRuntimeMs: 349_000 });
    assert.deepEqual(shareOfLimits(withRunning("running", []), {}, 5000), { maxCostUsd: null, maxRuntimeMs: null });
  });

  test("a task already running is never started a second time", () => {
    const state = { ...withRunning("running", ["p-1", "p-2"]), config: { ...CONFIG, parallel: 3 } };
    const step = fanOutStep(state, look());
    assert.deepEqual(
      of(step.effects, "start").map((effect) => [effect.start.childId, effect.start.taskId]),
      [["p-3", "T3"]],
    );
  });

  test("status.json says what the parent does: its children, their tasks, its spend, a merge, or its ending", () => {
    const running = fanOutStep(withRunning("running", ["p-1", "p-2"]), look({ costs: { "p-1": 0.25, "p-2": 0.5 } }));
    assert.deepEqual(of(running.effects, "status")[0]?.patch, {
      state: "running",
      iteration: 2,
      cost_usd: 0.75,
      current_task: "T1, T2",
      last_action: "2 child run(s) running",
    });
    const merging = fanOutStep(
      withRunning("running", []),
      look({ tasks: { ok: true, format: "prd", tasks: [] }, queue: { length: 1, current: "p-1", waiting: false } }),
    );
    assert.equal(of(merging.effects, "status")[0]?.patch.last_action, "merging ralph/p-1 into ralph/p");
    const ending = fanOutStep(withRunning("ending", ["p-1"]), look());
    assert.equal(of(ending.effects, "status")[0]?.patch.last_action, "ending: STOP file");
  });
});
