// The guardian: a SIGKILLed runner leaves no agent process behind.
import { describe, it, after } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { findOnPath } from "../../src/process/supervision.js";
import { FIXTURES, isRunning, killCarriers, liveCarriers, newMarker } from "../fixtures/tree-harness.js";
import { waitFor, waitForLine, within } from "../helpers/wait.js";

const dir = mkdtempSync(join(tmpdir(), "ralph-guardian-"));
const cleanups: Array<() => void> = [];
after(() => {
  for (const cleanup of cleanups) cleanup();
  rmSync(dir, { recursive: true, force: true });
});

interface Ready {
  runner: number;
  guardian: number;
  root?: number;
  pids?: number[];
}

async function startRunner(mode: string, graceMs: number) {
  const marker = newMarker();
  const child = spawn(
    process.execPath,
    [join(FIXTURES, "tree-runner.js"), mode, marker.value, String(graceMs), join(dir, marker.value)],
    {
      stdio: ["ignore", "pipe", "inherit"],
    },
  );
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("exit", (code, signal) => resolve({ code, signal })),
  );
  cleanups.push(() => {
    killCarriers(marker);
    child.kill("SIGKILL");
  });
  const ready = JSON.parse(await waitForLine(child.stdout, "READY ")) as Ready;
  cleanups.push(() => {
    // The guardian never carries the marker: kill it by pid, if it is still the one we started.
    if (isRunning(ready.guardian)) process.kill(ready.guardian, "SIGKILL");
  });
  return { child, marker, ready, exited };
}

describe("guardian", () => {
  it("ends the whole tree within grace + 1 s after the runner is SIGKILLed", async (t) => {
    const graceMs = 500;
    const { child, marker, ready, exited } = await startRunner("kill", graceMs);
    const tree = [ready.root as number, ...(ready.pids ?? [])];
    assert.equal(liveCarriers(marker, tree).length, 12, "the agent tree is running");
    assert.ok(isRunning(ready.guardian));
    // While the runner lives the guardian only waits: a small Perl process, Node only once it has work.
    if (findOnPath("perl")) assert.equal(readFileSync(`/proc/${ready.guardian}/comm`, "utf8").trim(), "perl");
    child.kill("SIGKILL");
    await exited;
    const killedAt = performance.now();
    await waitFor(() => liveCarriers(marker).length === 0, "the marked tree to be gone", graceMs + 1000);
    const elapsed = performance.now() - killedAt;
    t.diagnostic(
      `runner SIGKILLed: tree (with a TERM-ignorer) gone ${Math.round(elapsed)} ms later (grace ${graceMs} ms)`,
    );
    assert.deepEqual(liveCarriers(marker, tree), []);
    // And the guardian exits once its work is done.
    await waitFor(() => !isRunning(ready.guardian), "the guardian to exit", 5000);
    assert.ok(performance.now() - killedAt < graceMs + 5000);
  });

  it("after dispose() exits quietly and leaves the tree to the runner", async () => {
    const { marker, ready } = await startRunner("dispose", 200);
    await waitFor(() => !isRunning(ready.guardian), "the guardian to exit", 5000);
    assert.equal(liveCarriers(marker).length, 12, "nothing was signalled");
  });

  it("does not keep the runner's event loop alive", async () => {
    const { ready, exited } = await startRunner("natural", 200);
    assert.deepEqual(await within(exited, 5000, "the runner to exit on its own"), { code: 0, signal: null });
    // The runner is gone without dispose(): the guardian finds nothing marked and exits.
    await waitFor(() => !isRunning(ready.guardian), "the guardian to exit", 5000);
  });
});
