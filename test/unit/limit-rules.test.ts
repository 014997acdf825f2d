// The limit and stop rules are one set: the engine, the --parallel parent and hook mode end a run alike.
import { test } from "node:test";
import assert from "node:assert/strict";
import { limitEnding, remainingRuntimeMs, stopEnding } from "../../src/control/limit-rules.js";
import {
  allTasksEnding,
  limitEnding as parentLimit,
  stopEnding as parentStop,
} from "../../src/parallel/fan-out-endings.js";

test("limits end a run in one order: iterations, then runtime, then budget; none reached → null", () => {
  const all = { maxIterations: 3, maxRuntimeMs: 10_000, maxCostUsd: 1 };
  assert.equal(limitEnding(all, { iterations: 3, elapsedMs: 20_000, costUsd: 2 })?.reason, "MAX_ITERATIONS");
  assert.equal(limitEnding(all, { iterations: 2, elapsedMs: 20_000, costUsd: 2 })?.reason, "RUNTIME_EXCEEDED");
  assert.deepEqual(limitEnding(all, { iterations: 2, elapsedMs: 0, costUsd: 1 }), {
    reason: "BUDGET_EXCEEDED",
    detail: "spent $1.0000 (CLI estimate), limit $1",
  });
  assert.equal(
    limitEnding(
      { maxIterations: 0, maxRuntimeMs: null, maxCostUsd: null },
      { iterations: 99, elapsedMs: 1e9, costUsd: 1e3 },
    ),
    null,
  );
});

test("the --parallel parent applies the same runtime and budget rules (its max_iterations caps each child, not itself)", () => {
  const settings = { maxRuntimeMs: 10_000, maxCostUsd: 1 };
  for (const [spent, elapsed] of [
    [2, 20_000],
    [2, 0],
    [0, 20_000],
    [0, 0],
  ] as const) {
    assert.deepEqual(
      parentLimit(settings, spent, elapsed),
      limitEnding({ maxIterations: 0, ...settings }, { iterations: 0, elapsedMs: elapsed, costUsd: spent }),
    );
  }
  assert.equal(parentStop({ stop: false, stopNow: false, pause: false, answer: null }), null);
  assert.equal(
    parentStop({ stop: true, stopNow: true, pause: false, answer: null })?.reason,
    stopEnding({ stop: true, stopNow: true }, { stop: "", now: "" })?.reason,
  );
});

test("a --parallel parent whose children finished every task ends DONE; NO_WORK only when nothing was open at its start", () => {
  assert.deepEqual(allTasksEnding("prd.json", true, []), {
    reason: "DONE",
    detail: "the children finished every task in prd.json",
  });
  assert.deepEqual(allTasksEnding("prd.json", false, []), {
    reason: "NO_WORK",
    detail: "every task in prd.json was already done",
  });
  assert.equal(allTasksEnding("prd.json", true, ["child p-2 ended FAILED: x"]).reason, "FAILED");
});

test("what is left of --max-runtime for a run started now: whole seconds, rounded down, at least one; none without a cap", () => {
  assert.equal(remainingRuntimeMs(60_000, 10_000), 50_000);
  // Rounded up, a child would outlive its parent's cap by up to a second.
  assert.equal(remainingRuntimeMs(60_000, 10_500), 49_000);
  assert.equal(remainingRuntimeMs(60_000, 59_900), 1000);
  assert.equal(remainingRuntimeMs(60_000, 90_000), 1000);
  assert.equal(remainingRuntimeMs(null, 10_000), null);
});
