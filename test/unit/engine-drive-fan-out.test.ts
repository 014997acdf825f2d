// The `--parallel` parent driven end to end through a fake FanOutIo: no processes, no git. Children end when
// the test says; merges are made by a fake integration branch that can conflict.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defaultSettings } from "../../src/config/run-options.js";
import { runFanOut, type FanOutOptions } from "../../src/parallel/fan-out.js";
import type { ChildExit, ChildLimits, ChildStart, FanOutIo } from "../../src/parallel/fan-out-io.js";
import type { SentinelState } from "../../src/control/control-files.js";
import type { RunStatus } from "../../src/store/status-file.js";
import type { InterruptSignal } from "../../src/exit/exit-reasons.js";
import { readCompletion } from "../../src/store/progress-log.js";
import { RunFileError } from "../../src/store/regular-file.js";

const TASKS = JSON.stringify({
  userStories: [1, 2, 3].map((n) => ({ id: `T${n}`, title: `task ${n}`, priority: n, passes: false })),
});

/** A fake outside world: each child waits until `finish` is called for it. */
function fakeWorld(options: { conflictOn?: string[]; resolves?: boolean; resolveCostUsd?: number } = {}) {
  const finishers = new Map<string, (exit: ChildExit) => void>();
  const statuses = new Map<string, Partial<RunStatus>>();
  const started: ChildStart[] = [];
  const resolves: Array<{ id: string } & ChildLimits> = [];
  // The clock the parent reads (its runtime cap counts on it); a test moves it on.
  let clockMs = Date.parse("2026-12-01T00:00:00.000Z");
  const merged: string[] = [];
  const signalled: Array<[string, string]> = [];
  const stops: Array<[string, boolean]> = [];
  const sentinels: SentinelState = { stop: false, stopNow: false, pause: false, answer: null };
  const interrupted = new AbortController();
  let first: InterruptSignal | null = null;
  let startedHook: (start: ChildStart) => void = () => undefined;
  let commits = 0;
  let merging = "";
  // The files git would call unmerged now.
  let conflicted: string[] = [];
  const io: FanOutIo = {
    startChild(start) {
      started.push(start);
      const exited = new Promise<ChildExit>((done) => finishers.set(start.childId, done));
      queueMicrotask(() => startedHook(start));
      return { exited, signal: (signal) => signalled.push([start.childId, signal]) };
    },
    startResolve(id, _prompt, limits) {
      resolves.push({ id, ...limits });
      if (options.resolves) conflicted = [];
      statuses.set(id, {
        exit_reason: options.resolves ? "DONE" : "FAILED",
        last_action: "resolve",
        cost_usd: options.resolveCostUsd ?? 0.1,
      });
      return { exited: Promise.resolve({ code: 0, signal: null, stderr: "" }), signal: () => undefined };
    },
    merge: {
      head: async () => ({ ok: true, commit: `c${commits}` }),
      startMerge: async (branch) => {
        merging = branch;
        conflicted = options.conflictOn?.includes(branch) ? ["a.txt"] : [];
        return { ok: true, conflicts: conflicted };
      },
      unmerged: async () => ({ ok: true, paths: conflicted }),
      hasMarkers: (path) => conflicted.includes(path),
      stageAllBut: async (paths) => {
        conflicted = paths;
        return { ok: true };
      },
      writeTasks: async () => ({ ok: true }),
      commit: async () => {
        commits += 1;
        merged.push(merging);
        return { ok: true, commit: `c${commits}` };
      },
      resetTo: async () => {
        conflicted = [];
        return { ok: true };
      },
      runChecks: async () => ({ passed: true, output: "" }),
    },
    readEvents: () => [],
    readChildStatus: (id) => (statuses.get(id) as RunStatus | undefined) ?? null,
    readSentinels: () => ({ ...sentinels }),
    stopChild(id, now) {
      stops.push([id, now]);
      return true;
    },
    now: () => new Date(clockMs),
    env: {},
    signals: { interrupted: interrupted.signal, urgent: new AbortController().signal, firstSignal: () => first },
    host: { pid: 4242, pidStart: null, hostname: "fake" },
    listener: { event: () => undefined, log: () => undefined },
  };
  return {
    io,
    started,
    resolves,
    later: (ms: number) => (clockMs += ms),
    merged,
    signalled,
    stops,
    sentinels,
    onStart: (hook: (start: ChildStart) => void) => (startedHook = hook),
    finish(id: string, reason: string, costUsd = 0.25) {
      statuses.set(id, {
        exit_reason: reason as RunStatus["exit_reason"],
        last_action: `ended ${reason}`,
        cost_usd: costUsd,
      });
      finishers.get(id)?.({ code: reason === "DONE" ? 0 : 1, signal: null, stderr: "" });
    },
    signal(signal: InterruptSignal) {
      first = signal;
      interrupted.abort();
    },
  };
}

function options(dir: string, patch: Partial<FanOutOptions["settings"]> = {}): FanOutOptions {
  const settings = { ...defaultSettings(), agent: "command" as const, parallel: 2, tasks: "prd.json", ...patch };
  return {
    projectDir: dir,
    runId: "p",
    settings,
    plan: {
      active: true,
      maxIterations: 3,
      completionPromise: null,
      completionCriteria: [],
      tasks: "prd.json",
      prompt: Buffer.from("x"),
    },
    previous: null,
    integration: {
      path: dir,
      branch: "ralph/p",
      head: "c0",
      tasksPath: "prd.json",
      tasksText: TASKS,
      base: "c0",
      baseBranch: "main",
    },
    supervision: "tree",
  };
}

const runFile = (dir: string, name: string) => join(dir, ".ralph", "runs", "p", name);
const events = (dir: string) =>
  readFileSync(join(dir, ".ralph", "runs", "p", "events.jsonl"), "utf8")
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as { type: string; child?: string; task?: string });

describe("runFanOut through fakes", { timeout: 15_000 }, () => {
  test("three tasks, two at a time: each DONE child merged in the order it ended, then DONE", async () => {
    const dir = mkdtempSync(join(tmpdir(), "ralph-fan-"));
    try {
      const world = fakeWorld();
      // The second child ends first; the first once the third has started (in the second's place); then the third.
      world.onStart((start) => {
        if (start.childId === "p-2") world.finish("p-2", "DONE");
        if (start.childId === "p-3") {
          world.finish("p-1", "DONE");
          world.finish("p-3", "DONE");
        }
      });
      const result = await runFanOut(options(dir), world.io);
      assert.deepEqual([result.reason, result.exitCode, result.iterations], ["DONE", 0, 3]);
      assert.deepEqual(world.merged, ["ralph/p-2", "ralph/p-1", "ralph/p-3"]);
      assert.deepEqual(
        world.started.map((start) => start.taskId),
        ["T1", "T2", "T3"],
      );
      assert.equal(result.costUsd, 0.75);
      assert.deepEqual(
        events(dir)
          .filter((event) => event.type === "child_merged")
          .map((event) => event.task),
        ["T2", "T1", "T3"],
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("a conflict no resolve run can fix: the merge is abandoned and the parent ends FAILED naming the task", async () => {
    const dir = mkdtempSync(join(tmpdir(), "ralph-fan-"));
    try {
      const world = fakeWorld({ conflictOn: ["ralph/p-1"] });
      world.onStart((start) => world.finish(start.childId, "DONE"));
      const result = await runFanOut(options(dir, { maxResolve: 1 }), world.io);
      assert.equal(result.reason, "FAILED");
      assert.match(result.detail, /1 task\(s\) left pending: merge of ralph\/p-1 abandoned/);
      assert.deepEqual(world.merged, ["ralph/p-2", "ralph/p-3"]);
      assert.deepEqual(
        events(dir)
          .filter((event) => event.type === "merge_abandoned")
          .map((event) => event.task),
        ["T1"],
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("a child's failure: its task stays pending, its siblings go on and are merged, the parent ends FAILED", async () => {
    const dir = mkdtempSync(join(tmpdir(), "ralph-fan-"));
    try {
      const world = fakeWorld();
      world.onStart((start) => world.finish(start.childId, start.taskId === "T2" ? "FAILED" : "DONE"));
      const result = await runFanOut(options(dir), world.io);
      assert.equal(result.reason, "FAILED");
      assert.match(result.detail, /child p-2 ended FAILED/);
      assert.deepEqual(world.merged, ["ralph/p-1", "ralph/p-3"]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("budget: over --max-cost no child starts and the running ones are stopped at their boundary", async () => {
    const dir = mkdtempSync(join(tmpdir(), "ralph-fan-"));
    try {
      const world = fakeWorld();
      world.onStart((start) => {
        if (start.childId === "p-1") world.finish("p-1", "DONE", 1.5);
      });
      const stopped = new Promise<void>((done) => {
        const stopChild = world.io.stopChild;
        world.io.stopChild = (id, now) => {
          queueMicrotask(() => world.finish(id, "STOPPED", 0));
          done();
          return stopChild(id, now);
        };
      });
      const result = await runFanOut(options(dir, { maxCostUsd: 1 }), world.io);
      await stopped;
      assert.equal(result.reason, "BUDGET_EXCEEDED");
      assert.deepEqual(world.stops, [["p-2", false]]);
      assert.deepEqual(
        world.started.map((start) => [start.childId, start.maxCostUsd]),
        [
          ["p-1", 1],
          ["p-2", 1],
        ],
      );
      assert.deepEqual(world.merged, ["ralph/p-1"]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("a resolve run is bounded by what is left of --max-runtime and --max-cost, and its spend counts toward --max-cost", async () => {
    const dir = mkdtempSync(join(tmpdir(), "ralph-fan-"));
    try {
      const world = fakeWorld({ conflictOn: ["ralph/p-1"], resolves: true, resolveCostUsd: 0.5 });
      world.onStart((start) => {
        if (start.childId !== "p-1") return world.finish(start.childId, "DONE", 0.1);
        world.later(250_400);
        world.finish("p-1", "DONE", 0.25);
      });
      const given = options(dir, { parallel: 1, maxCostUsd: 1, maxRuntimeMs: 600_000 });
      const result = await runFanOut(
        {
          ...given,
          integration: {
            ...given.integration,
            tasksText: JSON.stringify({ userStories: [{ id: "T1", title: "one", priority: 1, passes: false }] }),
          },
        },
        world.io,
      );
      assert.deepEqual([result.reason, world.merged], ["DONE", ["ralph/p-1"]]);
      // 250.4 s of the 600 s gone: 349 whole seconds left; $0.25 of the $1 spent by the child.
      assert.deepEqual(world.resolves, [{ id: "p-resolve-1", maxRuntimeMs: 349_000, maxCostUsd: 0.75 }]);
      assert.equal(result.costUsd, 0.75, "the child's $0.25 and the resolve run's $0.50");
      // $0.25 + $0.10 + $0.10 for the children is under a $0.70 budget; with the resolve run's $0.50 it is over.
      const over = fakeWorld({ conflictOn: ["ralph/p-1"], resolves: true, resolveCostUsd: 0.5 });
      over.onStart((start) => over.finish(start.childId, "DONE", start.childId === "p-1" ? 0.25 : 0.1));
      const dir2 = join(dir, "second");
      mkdirSync(dir2);
      const second = await runFanOut(options(dir2, { parallel: 1, maxCostUsd: 0.7 }), over.io);
      assert.deepEqual([second.reason, over.resolves.length], ["BUDGET_EXCEEDED", 1]);
      // $0.85, or $0.95 when the third child started before the resolve run ended.
      assert.match(second.detail, /^spent \$0\.[89]500 .*limit \$0\.7/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("a signal is passed on to every child; the parent ends INTERRUPTED once they are gone", async () => {
    const dir = mkdtempSync(join(tmpdir(), "ralph-fan-"));
    try {
      const world = fakeWorld();
      world.onStart((start) => {
        if (start.childId === "p-2") world.signal("SIGTERM");
      });
      const signalled = world.io.startChild;
      world.io.startChild = (start) => {
        const handle = signalled(start);
        return {
          exited: handle.exited,
          signal: (signal) => (handle.signal(signal), world.finish(start.childId, "INTERRUPTED", 0)),
        };
      };
      const result = await runFanOut(options(dir), world.io);
      assert.equal(result.reason, "INTERRUPTED");
      assert.deepEqual(world.signalled.sort(), [
        ["p-1", "SIGTERM"],
        ["p-2", "SIGTERM"],
      ]);
      assert.deepEqual(world.merged, []);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("a child's agent swaps the parent's run.log for a link: the parent ends FAILED, stops the others and leaves its completion marker", async () => {
    const dir = mkdtempSync(join(tmpdir(), "ralph-fan-"));
    try {
      const world = fakeWorld();
      const elsewhere = join(dir, "elsewhere");
      writeFileSync(elsewhere, "");
      world.onStart((start) => {
        if (start.childId !== "p-1") return;
        unlinkSync(runFile(dir, "run.log"));
        symlinkSync(elsewhere, runFile(dir, "run.log"));
        world.finish("p-1", "DONE");
      });
      const stopChild = world.io.stopChild;
      world.io.stopChild = (id, now) => (queueMicrotask(() => world.finish(id, "STOPPED", 0)), stopChild(id, now));
      const result = await runFanOut(options(dir), world.io);
      assert.equal(result.reason, "FAILED");
      assert.match(result.detail, /run\.log: is a symbolic link/);
      // The ending was passed on to the child still running.
      assert.deepEqual(world.stops, [["p-2", false]]);
      assert.deepEqual(readCompletion(runFile(dir, "progress.txt")), { ended: true, reason: "FAILED" });
      const status = JSON.parse(readFileSync(runFile(dir, "status.json"), "utf8")) as RunStatus;
      assert.deepEqual([status.state, status.exit_reason], ["ended", "FAILED"]);
      assert.equal(readFileSync(elsewhere, "utf8"), "");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("the completion marker cannot be written at the end (a write error, as on a full disk): the parent waits and writes it once it can", async () => {
    const dir = mkdtempSync(join(tmpdir(), "ralph-fan-"));
    try {
      const world = fakeWorld();
      world.onStart((start) => world.finish(start.childId, "DONE"));
      const progress = runFile(dir, "progress.txt");
      const lines: string[] = [];
      world.io.listener = {
        event: () => undefined,
        log(line) {
          lines.push(line);
          // progress.txt a directory when the marker is due: its append fails with EISDIR, an error of the disk's kind.
          if (line.startsWith("run ended:")) {
            rmSync(progress);
            mkdirSync(progress);
          }
          if (line.startsWith("waiting for disk space")) rmSync(progress, { recursive: true });
        },
      };
      const result = await runFanOut(options(dir), world.io);
      assert.equal(result.reason, "DONE");
      assert.ok(lines.some((line) => line.startsWith("waiting for disk space")));
      assert.equal(result.marked, true);
      assert.deepEqual(readCompletion(progress), { ended: true, reason: "DONE" });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("looking fails (a run file swapped under the parent): it ends FAILED, ends its children, waits for them, and leaves its marker and no timer", async () => {
    const dir = mkdtempSync(join(tmpdir(), "ralph-fan-"));
    try {
      const world = fakeWorld();
      const gone: string[] = [];
      const startChild = world.io.startChild;
      world.io.startChild = (start) => {
        const handle = startChild(start);
        void handle.exited.then(() => gone.push(start.childId));
        return {
          exited: handle.exited,
          signal: (signal) => (
            handle.signal(signal),
            queueMicrotask(() => world.finish(start.childId, "INTERRUPTED", 0))
          ),
        };
      };
      const readSentinels = world.io.readSentinels;
      world.io.readSentinels = (paths) => {
        if (world.started.length === 2)
          throw new RunFileError(`${paths.stop}: is a FIFO; ralph reads only regular files here`);
        return readSentinels(paths);
      };
      const timers = process.getActiveResourcesInfo().filter((kind) => kind === "Timeout").length;
      const result = await runFanOut(options(dir), world.io);
      assert.equal(result.reason, "FAILED");
      assert.match(result.detail, /STOP: is a FIFO/);
      assert.deepEqual(world.signalled.sort(), [
        ["p-1", "SIGTERM"],
        ["p-2", "SIGTERM"],
      ]);
      assert.deepEqual(gone.sort(), ["p-1", "p-2"]);
      assert.deepEqual(readCompletion(runFile(dir, "progress.txt")), { ended: true, reason: "FAILED" });
      const status = JSON.parse(readFileSync(runFile(dir, "status.json"), "utf8")) as RunStatus;
      assert.deepEqual([status.state, status.exit_reason], ["ended", "FAILED"]);
      // Its heartbeat and its look's timer are gone with it: nothing keeps the process alive.
      assert.equal(process.getActiveResourcesInfo().filter((kind) => kind === "Timeout").length, timers);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("a record write fails (run.log unwritable, as on a full disk): the parent ends FAILED saying so and starts no more children", async () => {
    const dir = mkdtempSync(join(tmpdir(), "ralph-fan-"));
    try {
      const world = fakeWorld();
      world.onStart((start) => {
        if (start.childId !== "p-1") return;
        // run.log a directory: its next append fails with EISDIR, a failed write of the disk's kind.
        rmSync(runFile(dir, "run.log"));
        mkdirSync(runFile(dir, "run.log"));
        world.finish("p-1", "DONE");
      });
      const stopChild = world.io.stopChild;
      world.io.stopChild = (id, now) => (queueMicrotask(() => world.finish(id, "STOPPED", 0)), stopChild(id, now));
      const result = await runFanOut(options(dir), world.io);
      assert.equal(result.reason, "FAILED");
      assert.match(result.detail, /cannot write the run's files \(EISDIR\)/);
      assert.deepEqual(
        world.started.map((start) => start.childId),
        ["p-1", "p-2"],
      );
      assert.deepEqual(world.stops, [["p-2", false]]);
      assert.deepEqual(readCompletion(runFile(dir, "progress.txt")), { ended: true, reason: "FAILED" });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("a merge that fails (its reset refused) is made once: the queue waits for continue and the parent ends FAILED", async () => {
    const dir = mkdtempSync(join(tmpdir(), "ralph-fan-"));
    try {
      const world = fakeWorld();
      world.onStart((start) => {
        if (start.childId === "p-1") world.finish("p-1", "DONE");
      });
      const stopChild = world.io.stopChild;
      world.io.stopChild = (id, now) => (queueMicrotask(() => world.finish(id, "STOPPED", 0)), stopChild(id, now));
      const resets: string[] = [];
      world.io.merge.resetTo = async (commit) => {
        resets.push(commit);
        return { ok: false, message: "cannot reset" };
      };
      const result = await runFanOut(options(dir), world.io);
      assert.equal(result.reason, "FAILED");
      assert.match(result.detail, /^integration branch ralph\/p: cannot reset; 1 DONE child\(ren\) not merged yet/);
      assert.deepEqual(resets, ["c0"]);
      assert.deepEqual(world.merged, []);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("continuing with --max-runtime: the cap counts from this start (as for any run), and each child gets what is left of it", async () => {
    const dir = mkdtempSync(join(tmpdir(), "ralph-fan-"));
    try {
      const world = fakeWorld();
      world.onStart((start) => world.finish(start.childId, "DONE"));
      // A clock that stands still: the parent first started an hour before this start.
      world.io.now = () => new Date("2026-01-01T01:00:00Z");
      const previous = { run_id: "p", iteration: 0, cost_usd: 0, started_at: "2026-01-01T00:00:00.000Z" } as RunStatus;
      const result = await runFanOut({ ...options(dir, { maxRuntimeMs: 60_000 }), previous }, world.io);
      assert.equal(result.reason, "DONE");
      assert.deepEqual(
        world.started.map((start) => start.maxRuntimeMs),
        [60_000, 60_000, 60_000],
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
