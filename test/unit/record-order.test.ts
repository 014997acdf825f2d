// events.jsonl and run.log merged by time (`ralph logs`) give the order the runner wrote them in, also
// when both were written within the same millisecond (a fast machine, a fixed clock here).
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { RunLogReader, type LogEntry } from "../../src/view/run-log-reader.js";
import { RunRecord } from "../../src/run/run-record.js";
import { runPaths } from "../../src/store/run-paths.js";
import { newStatus } from "../../src/run/new-status.js";

test("a log line, then an event, then a log line, all in one millisecond, are read back in that order", async () => {
  const dir = mkdtempSync(join(tmpdir(), "ralph-record-order-"));
  try {
    const paths = runPaths(dir, "r");
    const clock = () => new Date(5_000);
    const status = newStatus({
      runId: "r",
      mode: "run",
      agent: "command",
      maxIterations: 1,
      host: { pid: 1, pidStart: null, hostname: "h" },
      cwd: dir,
      now: clock(),
      state: "running",
      lastAction: "",
    });
    const record = RunRecord.create(paths, status, { event: () => undefined, log: () => undefined }, clock);
    record.log("first: a note");
    record.event({ type: "iteration_started", iteration: 1, agent: "command" } as Parameters<RunRecord["event"]>[0]);
    record.log("then: another note");
    record.close();
    const seen: string[] = [];
    await new RunLogReader(paths).drain((entry: LogEntry) => {
      seen.push("line" in entry ? entry.line : entry.event.type);
    });
    assert.deepEqual(seen, ["first: a note", "iteration_started", "then: another note"]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
