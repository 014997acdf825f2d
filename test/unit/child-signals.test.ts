// A child engine's signals come only from its parent: the first passed on interrupts it, a further one makes
// it urgent (the parent decides the levels, as it did for child processes).
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { childSignals } from "../../src/parallel/child-signals.js";

describe("childSignals", () => {
  it("interrupts on the first signal passed on, turns urgent on a further one, keeps the first's name", () => {
    const child = childSignals();
    assert.equal(child.source.interrupted.aborted, false);
    assert.equal(child.source.firstSignal(), null);
    child.pass("SIGTERM");
    assert.deepEqual(
      [child.source.interrupted.aborted, child.source.interrupted.reason, child.source.urgent.aborted],
      [true, "SIGTERM", false],
    );
    child.pass("SIGINT");
    assert.deepEqual(
      [child.source.urgent.aborted, child.source.urgent.reason, child.source.firstSignal()],
      [true, "SIGINT", "SIGTERM"],
    );
  });
});
