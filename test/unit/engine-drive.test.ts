// The engine driven end to end through its injected EngineIo, with fakes: no processes, no git, no shell.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defaultSettings } from "../../src/config/run-options.js";
import { runEngine } from "../../src/engine/run-engine.js";
import type { RunStatus } from "../../src/store/status-file.js";
import { plan } from "../fixtures/engine-machine.js";
import { fakeWorld, type AgentScript } from "../fixtures/fake-engine-io.js";
import { verdict } from "../fixtures/engine-machine.js";

const CLAIM = "All done.\n<promise>DONE</promise>";

function start(
  scripts: AgentScript[],
  verdicts = [verdict(true)],
  settings: Partial<ReturnType<typeof defaultSettings>> = {},
) {
  const dir = mkdtempSync(join(tmpdir(), "ralph-engine-"));
  const world = fakeWorld(scripts, verdicts);
  const done = runEngine(
    {
      projectDir: dir,
      runId: "r",
      settings: { ...defaultSettings(), agent: "command", ...settings },
      plan: plan(),
      previous: null,
    },
    world.io,
  );
  const status = () => JSON.parse(readFileSync(join(dir, ".ralph", "runs", "r", "status.json"), "utf8")) as RunStatus;
  const progress = () => readFileSync(join(dir, ".ralph", "runs", "r", "progress.txt"), "utf8");
  return { dir, world, done, status, progress, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

describe("runEngine through fakes", { timeout: 15_000 }, () => {
  test("a claimed promise with passing checks: DONE after one iteration; env from the injected io", async () => {
    const run = start([{ lines: ["working", CLAIM.split("\n")[0] ?? "", "<promise>DONE</promise>"], exits: true }]);
    try {
      const result = await run.done;
      assert.deepEqual([result.reason, result.exitCode, result.iterations], ["DONE", 0, 1]);
      assert.equal(run.world.checksRun, 1);
      assert.equal(run.world.spawned[0]?.env.FAKE_ONLY, "from-io");
      assert.equal(run.world.spawned[0]?.env.RALPH_ITERATION, "1");
      assert.deepEqual(
        run.world.events.map((event) => event.type).filter((type) => type !== "agent_event"),
        ["run_started", "iteration_started", "criteria_checked", "iteration_ended", "run_ended"],
      );
      assert.deepEqual([run.status().state, run.status().calls, run.status().exit_reason], ["ended", 1, "DONE"]);
      assert.ok(run.world.plan, "state.md was written through the io");
    } finally {
      run.cleanup();
    }
  });

  test("a signal while the agent runs: its tree is ended, nothing is judged, INTERRUPTED", async () => {
    // The agent would claim the promise on its way out: a signal must still never lead to judging.
    const run = start([{ lines: [CLAIM], exits: false }]);
    try {
      await run.world.eventSeen("agent_event");
      run.world.signal("SIGTERM");
      const result = await run.done;
      assert.deepEqual([result.reason, result.exitCode], ["INTERRUPTED", 143]);
      assert.deepEqual(run.world.ended, ["while running"]);
      assert.equal(run.world.checksRun, 0);
      assert.match(run.progress(), /ended_by=interrupted\nresult=interrupted\n/);
      assert.doesNotMatch(run.progress(), /promise_found/);
      assert.equal(run.status().calls, 1);
    } finally {
      run.cleanup();
    }
  });

  test("stop --now: the control change ends the agent at once, STOPPED", async () => {
    const run = start([{ lines: ["working"], exits: false }]);
    try {
      await run.world.eventSeen("agent_event");
      run.world.sentinels.stop = true;
      run.world.sentinels.stopNow = true;
      run.world.control();
      const result = await run.done;
      assert.deepEqual([result.reason, result.detail], ["STOPPED", "stop --now ended the agent"]);
      assert.deepEqual(run.world.ended, ["while running"]);
    } finally {
      run.cleanup();
    }
  });

  test("PAUSE holds the next iteration until removed; then the run goes on", async () => {
    const run = start(
      [
        { lines: ["not yet"], exits: true },
        { lines: [CLAIM], exits: true },
      ],
      [verdict(true)],
    );
    try {
      run.world.sentinels.pause = true;
      await run.world.eventSeen("paused");
      assert.equal(run.status().state, "paused");
      assert.equal(run.world.spawned.length, 0);
      run.world.sentinels.pause = false;
      run.world.control();
      const result = await run.done;
      assert.deepEqual([result.reason, result.iterations], ["DONE", 2]);
      assert.ok(run.world.events.some((event) => event.type === "resumed"));
    } finally {
      run.cleanup();
    }
  });

  test("a usage limit: the iteration is not counted, the engine sleeps, then retries it", async () => {
    const run = start([
      { lines: ["limited"], exits: true, outcome: { limit: { message: "429", resetAt: null } } },
      { lines: [CLAIM], exits: true },
    ]);
    try {
      await run.world.eventSeen("waiting_limit");
      assert.deepEqual([run.status().state, run.status().iteration], ["waiting", 0]);
      assert.equal(run.world.spawned.length, 1);
      run.world.fireTimers();
      const result = await run.done;
      assert.deepEqual([result.reason, result.iterations], ["DONE", 1]);
      assert.equal(
        run.world.spawned[1]?.env.RALPH_ITERATION,
        "1",
        "the limited iteration is retried under its own number",
      );
    } finally {
      run.cleanup();
    }
  });
});

describe("questions through fakes", { timeout: 15_000 }, () => {
  test("an <ask> waits without spawning; an answer seen by the control watch resumes with both in the prompt", async () => {
    const run = start([
      { lines: ["<ask>Which database?</ask>"], exits: true },
      { lines: [CLAIM], exits: true },
    ]);
    try {
      await run.world.eventSeen("needs_human");
      // The driver first handles the look it queued with the event, then writes the state it waits in: one turn.
      await new Promise((resolve) => setImmediate(resolve));
      assert.deepEqual([run.status().state, run.status().question], ["needs_human", "Which database?"]);
      run.world.sentinels.answer = "Postgres";
      run.world.control();
      const result = await run.done;
      assert.deepEqual([result.reason, result.iterations], ["DONE", 2]);
      assert.match(String(run.world.spawned[1]?.stdin), /You asked: Which database\?\n\nAnswer: Postgres\n$/);
      const types = run.world.events
        .map((event) => event.type)
        .filter((type) => type === "needs_human" || type === "answered");
      assert.deepEqual(types, ["needs_human", "answered"]);
    } finally {
      run.cleanup();
    }
  });

  test("a continued run whose question is open starts waiting again, and publishes the question anew", async () => {
    const dir = mkdtempSync(join(tmpdir(), "ralph-engine-"));
    try {
      const world = fakeWorld([{ lines: [CLAIM], exits: true }], [verdict(true)]);
      const previous = {
        iteration: 1,
        calls: 1,
        cost_usd: 0,
        tokens: { input: 0, output: 0 },
        session_id: null,
        started_at: new Date().toISOString(),
        question: "Which database?",
        answer: null,
      } as unknown as RunStatus;
      const done = runEngine(
        { projectDir: dir, runId: "r", settings: { ...defaultSettings(), agent: "command" }, plan: plan(), previous },
        world.io,
      );
      await world.eventSeen("needs_human");
      assert.equal(world.spawned.length, 0);
      world.signal("SIGINT");
      const result = await done;
      assert.equal(result.reason, "INTERRUPTED");
      assert.equal(world.spawned.length, 0, "nothing ran: the run waited for its answer");
      const status = JSON.parse(readFileSync(join(dir, ".ralph", "runs", "r", "status.json"), "utf8")) as RunStatus;
      assert.equal(status.question, "Which database?", "the question is still open");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
