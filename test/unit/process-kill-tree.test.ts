// endTree against real process trees (Linux /proc).
import { describe, it, after } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { endTree, type EndTreeOptions } from "../../src/process/kill-tree.js";
import { findTree, ProcessInventory } from "../../src/process/inventory.js";
import { isRunning, killCarriers, liveCarriers, startTree, type TreeFixture } from "../fixtures/tree-harness.js";
import { waitFor } from "../helpers/wait.js";

const started: TreeFixture[] = [];
after(() => {
  for (const fixture of started) fixture.cleanup();
});

async function tree(shape: string): Promise<TreeFixture> {
  const fixture = await startTree(shape);
  started.push(fixture);
  return fixture;
}

/** Every process of the fixture, by recorded pid and by marker, that is still running. */
function leftovers(fixture: TreeFixture): number[] {
  return [...new Set([...liveCarriers(fixture.marker, fixture.allPids()), ...liveCarriers(fixture.marker)])];
}

const POLITE: EndTreeOptions = { graceMs: 2000, politeSignals: ["SIGINT", "SIGTERM"], politeGapMs: 100 };

describe("endTree on real trees", () => {
  const shapes: Array<[string, number, Partial<EndTreeOptions>]> = [
    ["wrapper", 3, {}],
    ["pgroup", 5, {}],
    ["setsid", 3, {}],
    ["daemon", 3, {}],
    ["ignorer", 2, { graceMs: 300 }],
    ["forker", 5, { graceMs: 400 }],
    ["mixed", 12, { graceMs: 300 }],
  ];
  for (const [shape, minimum, overrides] of shapes) {
    it(`leaves nothing of the ${shape} tree alive, and spares the runner and its parent`, async () => {
      const fixture = await tree(shape);
      assert.ok(leftovers(fixture).length >= minimum, "the fixture is running before the test");
      const report = await endTree(fixture.root, fixture.marker, [], { ...POLITE, ...overrides });
      assert.deepEqual(leftovers(fixture), []);
      assert.ok(report.found >= minimum, `found ${report.found}`);
      assert.equal(report.survivors, 0);
      assert.ok(isRunning(process.pid) && isRunning(process.ppid));
      if (shape === "forker") {
        assert.ok(report.killed >= 2, "the TERM-ignoring forkers were SIGKILLed");
        assert.ok(report.lateFound >= 1, "children forked during the grace were found and ended");
      }
    });
  }

  it("ends a ~200-process tree quickly, honouring SIGTERM", async (t) => {
    const fixture = await tree("big");
    assert.ok(leftovers(fixture).length >= 202);
    const report = await endTree(fixture.root, fixture.marker, [], POLITE);
    assert.deepEqual(leftovers(fixture), []);
    assert.ok(report.found >= 202, `found ${report.found}`);
    assert.equal(report.killed, 0, "everything ended on the polite signals");
    assert.ok(report.durationMs < POLITE.graceMs, `took ${report.durationMs} ms`);
    t.diagnostic(`202-process tree ended in ${report.durationMs} ms (found ${report.found})`);
  });

  it("SIGKILLs a TERM-ignorer only once the grace period is over", async (t) => {
    const fixture = await tree("ignorer");
    const graceMs = 600;
    const report = await endTree(fixture.root, fixture.marker, [], { ...POLITE, graceMs });
    assert.deepEqual(leftovers(fixture), []);
    assert.equal(report.killed, 1);
    assert.ok(report.durationMs >= graceMs, `took ${report.durationMs} ms`);
    // How soon after the grace the SIGKILL lands is a matter of timers under load: shown, not asserted.
    t.diagnostic(`TERM-ignorer: grace ${graceMs} ms, ended after ${report.durationMs} ms`);
  });

  it("skips the rest of the grace period when skipGrace is aborted", async () => {
    const fixture = await tree("ignorer");
    const skip = new AbortController();
    setTimeout(() => skip.abort(), 200);
    const report = await endTree(fixture.root, fixture.marker, [], {
      ...POLITE,
      graceMs: 30_000,
      skipGrace: skip.signal,
    });
    assert.deepEqual(leftovers(fixture), []);
    assert.ok(report.durationMs < 1500, `took ${report.durationMs} ms`);
  });

  it("never signals a bystander in the runner's own process group, even with the same marker and command", async (t) => {
    const fixture = await tree("wrapper");
    const bystander = spawn("sleep", ["1000"], {
      env: { ...process.env, [fixture.marker.key]: fixture.marker.value },
      stdio: "ignore",
    });
    const pid = bystander.pid as number;
    t.after(() => bystander.kill("SIGKILL"));
    await waitFor(() => liveCarriers(fixture.marker, [pid]).length === 1, "the bystander to carry the marker", 5000);
    await endTree(fixture.root, fixture.marker, [], POLITE);
    assert.deepEqual(leftovers(fixture), [pid], "only the bystander is left");
  });

  it("does not find the double-forked daemon without the marker (so the marker is what finds it)", async () => {
    const fixture = await tree("daemon");
    const report = await endTree(fixture.root, null, [], POLITE);
    assert.equal(report.survivors, 0);
    assert.equal(leftovers(fixture).length, 1, "the daemon survives an end by parentage only");
  });

  it("finds orphans through the inventory after their parents died", async () => {
    const fixture = await tree("wrapper");
    const inventory = new ProcessInventory(fixture.root, null);
    inventory.sample();
    const [wrapperShell, grandchild] = fixture.pids as [number, number];
    // Kill the root and the wrapper shell: the grandchild reparents away from the root.
    process.kill(fixture.root, "SIGKILL");
    process.kill(wrapperShell, "SIGKILL");
    await waitFor(
      () => !isRunning(fixture.root) && !isRunning(wrapperShell),
      "the root and the wrapper shell to die",
      5000,
    );
    assert.deepEqual(findTree(fixture.root, null, []), [], "parentage alone lost it");
    assert.deepEqual(
      findTree(null, null, inventory.identities()).map((identity) => identity.pid),
      [grandchild],
    );
    await endTree(null, null, inventory.identities(), POLITE);
    assert.deepEqual(leftovers(fixture), []);
  });
});

describe("known-false controls (the tree tests above must be able to fail)", () => {
  it("a single-pid SIGTERM of the root leaves survivors", async () => {
    const fixture = await tree("mixed");
    const exited = new Promise((resolve) => fixture.child.once("exit", resolve));
    process.kill(fixture.root, "SIGTERM");
    await exited;
    assert.ok(leftovers(fixture).length >= 10, `survivors: ${leftovers(fixture).length}`);
    killCarriers(fixture.marker);
  });

  it("kill(-pgid) of the root's group leaves survivors", async () => {
    const fixture = await tree("mixed");
    const exited = new Promise((resolve) => fixture.child.once("exit", resolve));
    process.kill(-fixture.root, "SIGKILL");
    await exited;
    assert.ok(leftovers(fixture).length >= 4, `survivors: ${leftovers(fixture).length}`);
    killCarriers(fixture.marker);
  });
});
