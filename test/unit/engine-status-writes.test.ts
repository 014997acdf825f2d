// status.json through a run: every state the runner waits in is on disk while it waits (a running
// iteration once STATUS_GAP_MS have passed since the last replace, any other state at once), and a state
// it only passes through (an iteration recorded, the next one started at once) costs no replace of its own.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defaultSettings } from "../../src/config/run-options.js";
import { runEngine } from "../../src/engine/run-engine.js";
import { RunRecord, STATUS_GAP_MS } from "../../src/run/run-record.js";
import type { RunStatus } from "../../src/store/status-file.js";
import { plan, verdict } from "../fixtures/engine-machine.js";
import { fakeWorld } from "../fixtures/fake-engine-io.js";

type Seen = Pick<RunStatus, "state" | "iteration" | "calls" | "last_action">;

const pick = (status: RunStatus): Seen => ({
  state: status.state,
  iteration: status.iteration,
  calls: status.calls,
  last_action: status.last_action,
});

/**
 * Runs `iterations` iterations whose agents start `startMs` after they are asked to; returns every status
 * written, and status.json as read while each agent ran and each check.
 */
async function iterate(
  criteria: boolean,
  iterations: number,
  startMs: number,
  during?: (world: ReturnType<typeof fakeWorld>, read: () => Seen) => Promise<void>,
) {
  const dir = mkdtempSync(join(tmpdir(), "ralph-status-writes-"));
  const file = join(dir, ".ralph", "runs", "r", "status.json");
  const read = () => pick(JSON.parse(readFileSync(file, "utf8")) as RunStatus);
  const world = fakeWorld(
    Array.from({ length: iterations }, () => ({ lines: ["working"], exits: true })),
    [verdict(false)],
  );
  const duringAgent: Seen[] = [];
  const duringChecks: Seen[] = [];
  const spawn = world.io.spawnAgent;
  world.io.spawnAgent = async (options) => {
    await new Promise((resolve) => setTimeout(resolve, startMs));
    const started = await spawn(options);
    if (started.ok) started.agent.stdout.once("data", () => duringAgent.push(read()));
    return started;
  };
  const check = world.io.checkCriteria;
  world.io.checkCriteria = async (list, context) => {
    await null;
    duringChecks.push(read());
    return check(list, context);
  };
  const written: Seen[] = [];
  // Every replace of status.json goes through the record's one private writer.
  const prototype = RunRecord.prototype as unknown as { writeStatus: () => void };
  const writeStatus = prototype.writeStatus;
  prototype.writeStatus = function (this: RunRecord) {
    writeStatus.call(this);
    if (this.status.state !== "starting") written.push(pick(this.status));
  };
  try {
    // The same check fails three times: the same-failure guard is off here, so the run reaches its cap.
    const thePlan = plan({
      maxIterations: iterations,
      completionPromise: null,
      completionCriteria: criteria ? [{ type: "command", check: "npm test" }] : [],
    });
    const running = runEngine(
      {
        projectDir: dir,
        runId: "r",
        settings: { ...defaultSettings(), agent: "command", sameFailureLimit: 0 },
        plan: thePlan,
        previous: null,
      },
      world.io,
    );
    await during?.(world, read);
    const result = await running;
    return { result, written, duringAgent, duringChecks };
  } finally {
    prototype.writeStatus = writeStatus;
    rmSync(dir, { recursive: true, force: true });
  }
}

describe("status.json during a run", { timeout: 15_000 }, () => {
  const running = (iteration: number) => ({
    state: "running",
    iteration,
    calls: iteration - 1,
    last_action: `iteration ${iteration} started`,
  });
  const ended = (iteration: number) => ({
    state: "ended",
    iteration,
    calls: iteration,
    last_action: `reached max_iterations ${iteration}`,
  });
  // Agents that take longer to start than the gap: each iteration's status is written before its agent runs.
  const slow = STATUS_GAP_MS + 20;

  test("with nothing to check: one replace per iteration, and each agent runs under its own", async () => {
    const { result, written, duringAgent, duringChecks } = await iterate(false, 3, slow);
    assert.equal(result.reason, "MAX_ITERATIONS");
    assert.deepEqual(duringAgent, [running(1), running(2), running(3)]);
    assert.deepEqual(duringChecks, []);
    assert.deepEqual(written, [running(1), running(2), running(3), ended(3)]);
  });

  test("with checks: the iteration they judge is on disk while they run, and still one replace per iteration", async () => {
    const { result, written, duringAgent, duringChecks } = await iterate(true, 3, slow);
    assert.equal(result.reason, "MAX_ITERATIONS");
    assert.deepEqual(duringAgent, [running(1), running(2), running(3)]);
    assert.deepEqual(duringChecks, [running(1), running(2), running(3)]);
    assert.deepEqual(written, [running(1), running(2), running(3), ended(3)]);
  });

  test("iterations faster than the gap: fewer replaces than iterations, the first and the ending at once", async () => {
    const { result, written } = await iterate(false, 10, 0);
    assert.equal(result.reason, "MAX_ITERATIONS");
    assert.ok(written.length < 11, `${written.length} replaces for 10 iterations`);
    assert.deepEqual(written[0], running(1));
    assert.deepEqual(written.at(-1), ended(10));
  });

  test("a pause right after a fast iteration is on disk when it is announced", async () => {
    const seen: Seen[] = [];
    const { result } = await iterate(false, 2, 0, async (world, read) => {
      await world.eventSeen("iteration_started");
      world.sentinels.pause = true;
      await world.eventSeen("paused");
      seen.push(read());
      world.sentinels.pause = false;
      world.control();
    });
    assert.equal(result.reason, "MAX_ITERATIONS");
    assert.equal(seen[0]?.state, "paused");
  });
});
