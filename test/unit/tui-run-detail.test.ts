// The terminal UI's run view reads a run in bounded windows from the end of its files: a long run is not
// loaded whole, and scrolling back reads one more window each time until the first line.
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runPaths } from "../../src/store/run-paths.js";
import { RunDetail } from "../../src/tui/run-detail.js";

const root = mkdtempSync(join(tmpdir(), "ralph-tui-detail-"));
after(() => rmSync(root, { recursive: true, force: true }));

const LINES = 2500;

function longRun(): string {
  const paths = runPaths(root, "long");
  mkdirSync(paths.dir, { recursive: true });
  const event = (fields: Record<string, unknown>) =>
    JSON.stringify({ v: 1, ts: "2026-12-01T00:00:00.000Z", run: "long", ...fields });
  const events = [event({ type: "iteration_started", iteration: 1, max_iterations: 1 })];
  for (let line = 1; line <= LINES; line++)
    events.push(event({ type: "agent_event", iteration: 1, kind: "text", text: `line ${line}` }));
  events.push(event({ type: "iteration_ended", iteration: 1, result: "done", duration_ms: 1200, cost_usd: 0.5 }));
  writeFileSync(paths.events, `${events.join("\n")}\n`);
  writeFileSync(paths.log, `${Array.from({ length: LINES }, (_, index) => `log ${index + 1}`).join("\n")}\n`);
  return root;
}

test("a long run is read a window from its end, and further back only as it is scrolled to", async () => {
  const detail = new RunDetail(runPaths(longRun(), "long"), 1, () => undefined);
  assert.equal(detail.loaded, false);
  await detail.open();
  try {
    assert.equal(detail.loaded, true);
    // The iteration list is whole (agent output is skipped, not held).
    assert.deepEqual(
      [...detail.iterations.values()].map((row) => [row.iteration, row.result, row.durationMs, row.costUsd]),
      [[1, "done", 1200, 0.5]],
    );
    const text = () => detail.output.map((line) => line.map((segment) => segment.text).join(""));
    // Not the whole run: a window from its end, which holds the last line.
    assert.ok(detail.output.length < LINES / 2, `${detail.output.length} lines held`);
    assert.equal(text().at(-1), "[1/1] 1.2s done");
    assert.equal(text().at(-2), `  line ${LINES}`);
    assert.equal(detail.hasEarlier("output"), true);
    assert.ok(detail.log.length < LINES / 2);
    assert.equal(detail.log.at(-1), `log ${LINES}`);
    // Scrolling back reads one window more each time, until the first line is held.
    let reads = 0;
    while (detail.hasEarlier("output")) {
      const held = detail.output.length;
      const added = await detail.earlier("output");
      assert.equal(detail.output.length, held + added);
      assert.ok(++reads < 10);
    }
    assert.ok(reads >= 2, `${reads} reads back`);
    assert.deepEqual(text().slice(0, 2), ["── iteration 1/1 ──", "  line 1"]);
    assert.equal(detail.output.length, LINES + 2);
    while (detail.hasEarlier("log")) await detail.earlier("log");
    assert.deepEqual([detail.log.length, detail.log[0]], [LINES, "log 1"]);
  } finally {
    detail.close();
  }
});
