// status.json through a run: every state the runner waits in is on disk while it waits, and a state it
// only passes through (an iteration recorded, the next one started at once) costs no replace of its own.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defaultSettings } from "../../src/config/run-options.js";
import { runEngine } from "../../src/engine/run-engine.js";
import { RunRecord } from "../../src/run/run-record.js";
import type { RunStatus } from "../../src/store/status-file.js";
import { plan, verdict } from "../fixtures/engine-machine.js";
import { fakeWorld } from "../fixtures/fake-engine-io.js";

type Seen = Pick<RunStatus, "state" | "iteration" | "calls" | "last_action">;

const pick = (status: RunStatus): Seen => ({ state: status.state, iteration: status.iteration, calls: status.calls, last_action: status.last_action });

/** Runs three iterations; returns every status the driver wrote, and status.json as read while each agent ran and each check. */
async function threeIterations(criteria: boolean) {
  const dir = mkdtempSync(join(tmpdir(), "ralph-status-writes-"));
  const file = join(dir, ".ralph", "runs", "r", "status.json");
  const read = () => pick(JSON.parse(readFileSync(file, "utf8")) as RunStatus);
  const world = fakeWorld(
    [0, 1, 2].map(() => ({ lines: ["working"], exits: true })),
    [verdict(false)],
  );
  const duringAgent: Seen[] = [];
  const duringChecks: Seen[] = [];
  const spawn = world.io.spawnAgent;
  world.io.spawnAgent = async (options) => {
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
  const update = Object.getOwnPropertyDescriptor(RunRecord.prototype, "update")?.value as RunRecord["update"];
  RunRecord.prototype.update = function (this: RunRecord, patch) {
    update.call(this, patch);
    written.push(pick(this.status));
  };
  try {
    // The same check fails three times: the same-failure guard is off here, so the run reaches its cap.
    const thePlan = plan({ maxIterations: 3, completionPromise: null, completionCriteria: criteria ? [{ type: "command", check: "npm test" }] : [] });
    const result = await runEngine({ projectDir: dir, runId: "r", settings: { ...defaultSettings(), agent: "command", sameFailureLimit: 0 }, plan: thePlan, previous: null }, world.io);
    return { result, written, duringAgent, duringChecks };
  } finally {
    RunRecord.prototype.update = update;
    rmSync(dir, { recursive: true, force: true });
  }
}

describe("status.json during a run", { timeout: 15_000 }, () => {
  const running = (iteration: number) => ({ state: "running", iteration, calls: iteration - 1, last_action: `iteration ${iteration} started` });
  const ended = { state: "ended", iteration: 3, calls: 3, last_action: "reached max_iterations 3" };

  test("with nothing to check: one replace per iteration, and each agent runs under its own", async () => {
    const { result, written, duringAgent, duringChecks } = await threeIterations(false);
    assert.equal(result.reason, "MAX_ITERATIONS");
    assert.deepEqual(duringAgent, [running(1), running(2), running(3)]);
    assert.deepEqual(duringChecks, []);
    assert.deepEqual(written, [running(1), running(2), running(3), ended]);
  });

  test("with checks: the iteration they judge is on disk while they run, and still one replace per iteration", async () => {
    const { result, written, duringAgent, duringChecks } = await threeIterations(true);
    assert.equal(result.reason, "MAX_ITERATIONS");
    assert.deepEqual(duringAgent, [running(1), running(2), running(3)]);
    assert.deepEqual(duringChecks, [running(1), running(2), running(3)]);
    assert.deepEqual(written, [running(1), running(2), running(3), ended]);
  });
});
