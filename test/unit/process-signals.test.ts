// watchSignals / dieOfSignal in a child Node process.
import { describe, it, after } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import { FIXTURES } from "../fixtures/tree-harness.js";
import { waitForLine, within } from "../helpers/wait.js";

const children: ChildProcess[] = [];
after(() => {
  for (const child of children) child.kill("SIGKILL");
});

function start(argv: string[], program = process.execPath) {
  const child = spawn(program, argv, { stdio: ["ignore", "pipe", "inherit"] });
  children.push(child);
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>((resolve) =>
    child.once("exit", (code, signal) => resolve({ code, signal, at: performance.now() })),
  );
  return { child, exited, output: () => output };
}

const runner = join(FIXTURES, "tree-signal-runner.js");

describe("watchSignals", () => {
  it("aborts `interrupted` on the first signal, debounces a repeat within 0.5 s, and leaves within 1 s of a later one", async () => {
    const { child, exited, output } = start([runner, "watch"]);
    await waitForLine(child.stdout, "READY");
    const first = performance.now();
    child.kill("SIGTERM");
    assert.equal(await waitForLine(child.stdout, "INTERRUPTED "), "SIGTERM SIGTERM");
    // Like GNU timeout (child, then group): a repeat within 0.5 s, sent once the first was handled.
    child.kill("SIGTERM");
    const urgent = waitForLine(child.stdout, "URGENT ");
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, 650 - (performance.now() - first))));
    assert.ok(performance.now() - first > 500);
    const sentAt = performance.now();
    child.kill("SIGINT");
    // The repeated SIGTERM was debounced: the urgent reason is the later SIGINT.
    assert.equal(await urgent, "SIGINT");
    const exit = await within(exited, 3000, "the runner to exit");
    assert.ok(exit.at - sentAt < 1000, `gone ${Math.round(exit.at - sentAt)} ms after the urgent signal`);
    // It dies of the first signal, as an interrupted runner should.
    assert.deepEqual([exit.code, exit.signal], [null, "SIGTERM"]);
    assert.equal(output().match(/URGENT/g)?.length, 1);
  });

  it("a single signal only interrupts: the process keeps running", async () => {
    const { child, exited } = start([runner, "watch"]);
    await waitForLine(child.stdout, "READY");
    const interrupted = waitForLine(child.stdout, "INTERRUPTED ");
    child.kill("SIGHUP");
    assert.equal(await interrupted, "SIGHUP SIGHUP");
    assert.equal(child.exitCode, null);
    child.kill("SIGKILL");
    assert.equal((await exited).signal, "SIGKILL");
  });
});

describe("dieOfSignal", () => {
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
    it(`dies of ${signal} despite a foreign listener`, async () => {
      const { exited, output } = start([runner, "die", signal]);
      const exit = await within(exited, 5000, "the runner to exit");
      assert.deepEqual([exit.code, exit.signal], [null, signal]);
      assert.doesNotMatch(output(), /FOREIGN/);
    });
  }

  const canUnshare = spawnSync("unshare", ["--pid", "--fork", "--kill-child", "--mount-proc", "true"]).status === 0;
  it(
    "exits with 128+n when it runs as PID 1 (which cannot die of its own signal)",
    { skip: !canUnshare && "needs unshare --pid" },
    async () => {
      // --kill-child: killing unshare (cleanup) also kills the namespace's PID 1.
      const { exited } = start(
        ["--pid", "--fork", "--kill-child", "--mount-proc", process.execPath, runner, "die", "SIGTERM"],
        "unshare",
      );
      assert.equal((await within(exited, 5000, "the runner to exit")).code, 143);
    },
  );
});
