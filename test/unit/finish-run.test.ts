// Every exit reason ends through finishRun, the one place that writes the completion marker.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { EXIT_REASONS, exitCodeFor } from "../../src/exit/exit-reasons.js";
import { finishRun, markEndedIfNot } from "../../src/run/finish-run.js";
import { RunRecord } from "../../src/run/run-record.js";
import { runPaths } from "../../src/store/run-paths.js";
import type { RunStatus } from "../../src/store/status-file.js";
import type { RunEvent } from "../../src/store/event-log.js";

function status(runId: string): RunStatus {
  const now = new Date(0).toISOString();
  return {
    schema_version: 1,
    run_id: runId,
    mode: "run",
    pid: 1,
    pid_start: null,
    hostname: "h",
    cwd: "/",
    agent: "command",
    state: "running",
    iteration: 2,
    max_iterations: 3,
    calls: 2,
    cost_usd: 0.5,
    tokens: { input: 1, output: 2 },
    session_id: null,
    current_task: null,
    started_at: now,
    updated_at: now,
    ended_at: null,
    exit_reason: null,
    exit_code: null,
    last_action: "",
  };
}

describe("finishRun", () => {
  const expectedCodes = {
    DONE: 0,
    NO_WORK: 0,
    STOPPED: 0,
    DRY_RUN: 0,
    MAX_ITERATIONS: 3,
    BUDGET_EXCEEDED: 3,
    RUNTIME_EXCEEDED: 3,
    FAILED: 1,
    STALLED: 1,
    INTERRUPTED: 143,
  } as const;

  for (const reason of EXIT_REASONS) {
    test(`${reason}: marker last, status ended, run_ended event, exit code ${expectedCodes[reason]}`, () => {
      const dir = mkdtempSync(join(tmpdir(), "ralph-finish-"));
      try {
        const paths = runPaths(dir, "r1");
        const events: RunEvent[] = [];
        const record = RunRecord.create(
          paths,
          status("r1"),
          { event: (e) => events.push(e), log: () => undefined },
          () => new Date(1000),
        );
        record.progress([
          ["iteration", 2],
          ["result", "continue"],
        ]);
        const signal = reason === "INTERRUPTED" ? "SIGTERM" : undefined;
        const result = finishRun(record, { reason, detail: "test", ...(signal ? { signal } : {}) }, new Date(2000));
        assert.equal(result.exitCode, expectedCodes[reason]);
        assert.equal(result.exitCode, exitCodeFor(reason, signal));
        const lines = readFileSync(paths.progress, "utf8").trimEnd().split("\n");
        assert.deepEqual(lines.slice(-2), [`completion_reason=${reason}`, "promise=COMPLETE"]);
        const written = JSON.parse(readFileSync(paths.status, "utf8")) as RunStatus;
        assert.equal(written.exit_reason, reason);
        assert.equal(written.state, "ended");
        assert.equal(written.ended_at, new Date(2000).toISOString());
        const last = events.at(-1);
        assert.equal(last?.type, "run_ended");
        assert.equal(last.type === "run_ended" ? last.reason : null, reason);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  }

  test("the marker is written by finish-run alone: no other source file appends it", () => {
    const srcRoot = fileURLToPath(new URL("../../../src", import.meta.url));
    const offenders: string[] = [];
    const walk = (dir: string): void => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        const path = join(dir, entry.name);
        if (entry.isDirectory()) walk(path);
        else if (entry.name.endsWith(".ts")) {
          const text = readFileSync(path, "utf8");
          const writesMarker = /appendCompletionMarker\(|promise=COMPLETE|COMPLETION_MARKER\}/.test(text);
          if (
            writesMarker &&
            !path.endsWith(join("run", "finish-run.ts")) &&
            !path.endsWith(join("store", "progress-log.ts"))
          ) {
            offenders.push(path);
          }
        }
      }
    };
    walk(srcRoot);
    assert.ok(readdirSync(srcRoot).length > 0, "source tree found");
    assert.deepEqual(offenders, []);
  });

  /** What the run directory says of its end: status.json's ending, its run_ended events, its markers. */
  const endOf = (paths: ReturnType<typeof runPaths>) => {
    const written = JSON.parse(readFileSync(paths.status, "utf8")) as RunStatus;
    const events = readFileSync(paths.events, "utf8")
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line) as RunEvent);
    return {
      status: [written.state, written.exit_reason, written.exit_code],
      ended: events.filter((event) => event.type === "run_ended").length,
      markers: readFileSync(paths.progress, "utf8")
        .split("\n")
        .filter((line) => line === "promise=COMPLETE").length,
    };
  };

  /** A run `id` recorded in a fresh directory, given to `check`; the directory is removed after. */
  const withRun = (id: string, check: (paths: ReturnType<typeof runPaths>, record: RunRecord) => void) => {
    const dir = mkdtempSync(join(tmpdir(), "ralph-finish-"));
    try {
      const paths = runPaths(dir, id);
      const silent = { event: () => undefined, log: () => undefined };
      check(
        paths,
        RunRecord.create(paths, status(id), silent, () => new Date(1000)),
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };

  test("forced out by a second signal during teardown: a run this process still records is finished as any run is", () =>
    withRun("r3", (paths, record) => {
      record.update({ state: "stopping" });
      markEndedIfNot(paths.progress, "INTERRUPTED", "SIGTERM");
      assert.deepEqual(endOf(paths), { status: ["ended", "INTERRUPTED", 143], ended: 1, markers: 1 });
      // Forced out twice (the parent's and a child's hooks name the same run): nothing is written again.
      markEndedIfNot(paths.progress, "INTERRUPTED", "SIGTERM");
      assert.deepEqual(endOf(paths), { status: ["ended", "INTERRUPTED", 143], ended: 1, markers: 1 });
    }));

  test("forced out after the run was finished: its ending stays, nothing is written twice", () =>
    withRun("r4", (paths, record) => {
      finishRun(record, { reason: "INTERRUPTED", detail: "x", signal: "SIGINT" }, new Date(2000));
      markEndedIfNot(paths.progress, "INTERRUPTED", "SIGTERM");
      assert.deepEqual(endOf(paths), { status: ["ended", "INTERRUPTED", 130], ended: 1, markers: 1 });
    }));

  test("the marker is written even when writing status fails", () => {
    const dir = mkdtempSync(join(tmpdir(), "ralph-finish-"));
    try {
      const paths = runPaths(dir, "r2");
      const record = RunRecord.create(
        paths,
        status("r2"),
        { event: () => undefined, log: () => undefined },
        () => new Date(1000),
      );
      const broken = Object.create(record) as RunRecord;
      broken.update = () => {
        throw new Error("disk full");
      };
      finishRun(broken, { reason: "FAILED", detail: "x" }, new Date(2000));
      assert.deepEqual(readFileSync(paths.progress, "utf8").trimEnd().split("\n").slice(-2), [
        "completion_reason=FAILED",
        "promise=COMPLETE",
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
