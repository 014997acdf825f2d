// Big logs: `ralph logs`, `ralph status` and the dashboard read events.jsonl a chunk at a time from the end
// they need, so their memory stays bounded whatever the file's size, hand-written garbage included.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { appendFileSync, closeSync, mkdirSync, openSync, readFileSync, writeSync } from "node:fs";
import { join } from "node:path";
import { cleanupAfterTests, type Started } from "../fixtures/e2e-cleanup.js";
import { writeBigRun } from "../helpers/big-events.js";
import { startUi } from "../helpers/browser.js";
import { within } from "../helpers/wait.js";

/** ralph's resident memory may peak at this (an idle Node is about 40 MB; the old readers took 400 MB and more). */
const BOUND_MB = 150;
const cleanup = cleanupAfterTests();

/** Polls a process's peak RSS (VmHWM); past the bound it is SIGKILLed at once, so a reader that gathers the whole file fails fast. */
function watchPeak(started: Started): { peakMb: () => number; stop: () => void } {
  let peakKb = 0;
  const look = () => {
    try {
      const kb = Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${started.child.pid}/status`, "utf8"))?.[1] ?? 0);
      peakKb = Math.max(peakKb, kb);
      if (kb > BOUND_MB * 1024) started.child.kill("SIGKILL");
    } catch {
      // gone
    }
  };
  const timer = setInterval(look, 10);
  return { peakMb: () => peakKb / 1024, stop: () => clearInterval(timer) };
}

async function ralphWithin(
  args: string[],
  cwd: string,
): Promise<{ code: number | null; stdout: string; stderr: string; peakMb: number }> {
  const started = cleanup.ralph(args, cwd);
  const peak = watchPeak(started);
  const timer = setTimeout(() => started.child.kill("SIGKILL"), 60_000);
  const result = await started.done;
  clearTimeout(timer);
  peak.stop();
  return { code: result.code, stdout: result.stdout, stderr: result.stderr, peakMb: peak.peakMb() };
}

describe("big logs", () => {
  let dir = "";
  before(() => {
    dir = cleanup.project("ralph-big-logs-").dir;
    // 200 MB of agent events showing one line each, then the run's last words and its end.
    writeBigRun(dir, "big", 200, "tool_result", "the very last words");
  });
  after(() => cleanup.run());

  test("ralph logs on a 200 MB events.jsonl shows the run from first event to last within the memory bound", async () => {
    const result = await ralphWithin(["logs", "big"], dir);
    assert.ok(result.peakMb < BOUND_MB, `peak RSS ${result.peakMb.toFixed(0)} MB (bound ${BOUND_MB} MB)`);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /── iteration 1\/1 ──/);
    assert.match(result.stdout, /the very last words/);
    assert.ok(
      result.stdout.indexOf("── iteration 1/1 ──") < result.stdout.indexOf("the very last words"),
      "in the run's order",
    );
  });

  test("ralph logs and status on a hand-written events.jsonl (100 MB without a newline, garbage, then an event) stay within the bound", async () => {
    const runDir = join(dir, ".ralph", "runs", "hostile");
    mkdirSync(runDir, { recursive: true, mode: 0o700 });
    const fd = openSync(join(runDir, "events.jsonl"), "w", 0o600);
    const block = Buffer.alloc(1024 * 1024, "x");
    for (let i = 0; i < 100; i++) writeSync(fd, block);
    writeSync(fd, `\n${"\u0000\u00ff{garbage\n".repeat(1000)}`);
    closeSync(fd);
    appendFileSync(
      join(runDir, "events.jsonl"),
      `${JSON.stringify({ v: 1, ts: "2026-01-01T00:00:01.000Z", run: "hostile", type: "iteration_started", iteration: 1, max_iterations: 1 })}\n`,
    );
    const logs = await ralphWithin(["logs", "hostile"], dir);
    assert.ok(logs.peakMb < BOUND_MB, `ralph logs: peak RSS ${logs.peakMb.toFixed(0)} MB (bound ${BOUND_MB} MB)`);
    assert.equal(logs.code, 0, logs.stderr);
    assert.match(logs.stdout, /── iteration 1\/1 ──/, "the real event after the garbage is shown");
    const status = await ralphWithin(["status", "--json", "hostile"], dir);
    assert.ok(status.peakMb < BOUND_MB, `ralph status: peak RSS ${status.peakMb.toFixed(0)} MB (bound ${BOUND_MB} MB)`);
    assert.equal(status.code, 0, status.stderr);
    assert.deepEqual(
      (JSON.parse(status.stdout) as { recent_events: Array<{ type: string }> }).recent_events.map(
        (event) => event.type,
      ),
      ["iteration_started"],
    );
  });

  test("the dashboard opens a run with a 200 MB events.jsonl from its end within the memory bound, and answers other requests meanwhile", async () => {
    const ui = await startUi(cleanup, [dir], dir);
    const peak = watchPeak(ui.started);
    try {
      const cookie = `ralph_ui_${ui.port}=${ui.token}`;
      const stream = await fetch(`${ui.origin}/api/run/0/big/stream`, { headers: { cookie } });
      assert.equal(stream.status, 200);
      const reader = (stream.body as ReadableStream<Uint8Array>).getReader();
      let text = "";
      const deadline = Date.now() + 30_000;
      // The snapshot, then the charted events from before it (read back to the file's start).
      while (!/event: earlier\ndata: .*\n\n/.test(text)) {
        assert.ok(
          ui.started.running(),
          `ralph ui was ended past the memory bound (peak RSS ${peak.peakMb().toFixed(0)} MB, bound ${BOUND_MB} MB)`,
        );
        const { value, done } = await within(
          reader.read(),
          Math.max(0, deadline - Date.now()),
          `the snapshot and earlier events (so far: ${text.slice(0, 300)})`,
        );
        if (done) break;
        text += Buffer.from(value).toString("utf8");
        if (/event: snapshot\ndata: .*\n\n/.test(text)) {
          const page = await fetch(`${ui.origin}/`, { headers: { cookie } });
          assert.equal(page.status, 200, "the runs page is served while the run's stream reads");
        }
      }
      await reader.cancel();
      const snapshot = JSON.parse(/event: snapshot\ndata: (.*)\n\n/.exec(text)?.[1] ?? "null") as {
        events: Array<{ type: string }>;
        output: Array<Array<{ text: string }>>;
      };
      assert.ok(
        snapshot.output.some((line) => line.some((segment) => segment.text.includes("the very last words"))),
        "the snapshot ends with the run's last output",
      );
      assert.ok(snapshot.output.length <= 2000);
      const earlier = JSON.parse(/event: earlier\ndata: (.*)\n\n/.exec(text)?.[1] ?? "null") as {
        events: Array<{ type: string }>;
      };
      assert.deepEqual(
        earlier.events.map((event) => event.type),
        ["run_started", "iteration_started"],
        "the charted events before the snapshot follow it",
      );
      assert.ok(peak.peakMb() < BOUND_MB, `ralph ui: peak RSS ${peak.peakMb().toFixed(0)} MB (bound ${BOUND_MB} MB)`);
    } finally {
      peak.stop();
    }
  });
});
