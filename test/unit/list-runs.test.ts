// listRuns: live, ended, stale and in-session (hook) runs.
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { listRuns, summariseRun } from "../../src/control/list-runs.js";
import { canonical, entryFile, ledgerReader, readLedgerEntry } from "../../src/control/ledger-entry.js";
import { appendCompletionMarker } from "../../src/store/progress-log.js";
import { fileDigest, recordRunCreated, updateLedgerEntry } from "../../src/control/run-ledger.js";

const dirs: string[] = [];
after(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

/** `ended`: the run's runner ended it (status.json, marker, a record naming no runner); `forged`: its files say so, the record still names the runner. */
function projectWith(
  runs: Array<{ id: string; mode: "run" | "hook"; ended?: boolean; marker?: boolean; forged?: boolean }>,
): string {
  const dir = mkdtempSync(join(tmpdir(), "ralph-list-"));
  dirs.push(dir);
  for (const run of runs) {
    const runDir = join(dir, ".ralph", "runs", run.id);
    mkdirSync(runDir, { recursive: true });
    const now = new Date(0).toISOString();
    writeFileSync(
      join(runDir, "status.json"),
      JSON.stringify({
        run_id: run.id,
        mode: run.mode,
        pid: 999999,
        pid_start: "1",
        hostname: "h",
        state: run.ended || run.forged ? "ended" : "running",
        exit_reason: run.ended || run.forged ? "DONE" : null,
        iteration: 1,
        max_iterations: 3,
        cost_usd: 0,
        started_at: now,
        updated_at: now,
        ended_at: null,
      }),
    );
    writeFileSync(join(runDir, "progress.txt"), "iteration=1\n\n");
    recordRunCreated(
      runDir,
      run.id,
      null,
      run.mode === "hook" ? null : { pid: 999999, pid_start: "1", hostname: "h", project_lock: false },
    );
    if (run.ended && run.mode === "run")
      updateLedgerEntry(runDir, { runner: null, status_sha256: fileDigest(join(runDir, "status.json")) });
    if (run.ended || run.marker) appendCompletionMarker(join(runDir, "progress.txt"), "DONE");
  }
  return dir;
}

const states = (dir: string, alive: boolean) =>
  listRuns(dir, () => alive, new Date(0)).map((run) => [run.id, run.state, run.active]);

describe("listRuns", () => {
  test("liveness is the runner's record: a live run whose status.json, locks and progress.txt were deleted is still running", () => {
    const dir = projectWith([{ id: "d", mode: "run" }]);
    for (const name of ["status.json", "progress.txt"]) rmSync(join(dir, ".ralph", "runs", "d", name));
    assert.deepEqual(states(dir, true), [["d", "running", true]]);
    assert.deepEqual(states(dir, false), [["d", "stale", false]]);
  });

  test("a run directory ralph has no record of is foreign, whatever its status.json says; never active", () => {
    const dir = projectWith([{ id: "ok", mode: "run" }]);
    const planted = join(dir, ".ralph", "runs", "zz");
    mkdirSync(planted);
    writeFileSync(
      join(planted, "status.json"),
      JSON.stringify({
        run_id: "zz",
        mode: "run",
        pid: 999999,
        pid_start: "1",
        hostname: "h",
        state: "running",
        iteration: 0,
        max_iterations: 3,
        cost_usd: 0,
        started_at: "2999-01-01T00:00:00.000Z",
        updated_at: "2999-01-01T00:00:00.000Z",
        ended_at: null,
      }),
    );
    assert.deepEqual(states(dir, true), [
      ["ok", "running", true],
      ["zz", "foreign", false],
    ]);
  });

  test("a run with a marker shows its reason; without one it is running while its runner lives, else stale", () => {
    const dir = projectWith([
      { id: "a", mode: "run", ended: true },
      { id: "b", mode: "run" },
    ]);
    assert.deepEqual(states(dir, true), [
      ["a", "DONE", false],
      ["b", "running", true],
    ]);
    assert.deepEqual(states(dir, false), [
      ["a", "DONE", false],
      ["b", "stale", false],
    ]);
  });

  test("a runner that ends its run normally while the run is read: DONE, not INTERRUPTED (the files are read again once it is gone)", () => {
    const dir = projectWith([{ id: "r", mode: "run" }]);
    const runDir = join(dir, ".ralph", "runs", "r");
    // The runner finishes between the reads and the look at it: the final status.json, the marker, its record let go.
    const endsWhileRead = () => {
      const now = new Date(0).toISOString();
      writeFileSync(
        join(runDir, "status.json"),
        JSON.stringify({
          run_id: "r",
          mode: "run",
          pid: 999999,
          pid_start: "1",
          hostname: "h",
          state: "ended",
          exit_reason: "DONE",
          iteration: 1,
          max_iterations: 3,
          cost_usd: 0,
          started_at: now,
          updated_at: now,
          ended_at: now,
        }),
      );
      appendCompletionMarker(join(runDir, "progress.txt"), "DONE");
      updateLedgerEntry(runDir, { runner: null, status_sha256: fileDigest(join(runDir, "status.json")) });
      return false;
    };
    assert.equal(summariseRun(dir, "r", endsWhileRead, new Date(0)).summary.state, "DONE");
    // Known-false control: a runner killed with its record still naming it stays INTERRUPTED on the second read.
    const killed = projectWith([{ id: "k", mode: "run", marker: true }]);
    assert.equal(summariseRun(killed, "k", () => false, new Date(0)).summary.state, "INTERRUPTED");
  });

  test("a marker in progress.txt never gives a reason its runner did not record: a live runner's status decides, a dead one's run is INTERRUPTED", () => {
    const dir = projectWith([{ id: "m", mode: "run", marker: true }]);
    assert.deepEqual(states(dir, true), [["m", "running", true]], "a marker an agent appended does not end a live run");
    assert.deepEqual(
      states(dir, false),
      [["m", "INTERRUPTED", false]],
      "a runner forced out (or killed by its agent) leaves only a marker",
    );
  });

  test("an ending written in the run directory of a runner that died without ending the run is not trusted", () => {
    const dir = projectWith([
      { id: "f", mode: "run", forged: true },
      { id: "g", mode: "run", forged: true, marker: true },
    ]);
    assert.deepEqual(
      states(dir, true),
      [
        ["f", "running", true],
        ["g", "running", true],
      ],
      "a live runner's run is live, even with the runner's pid in the forged status.json",
    );
    assert.deepEqual(states(dir, false), [
      ["f", "stale", false],
      ["g", "INTERRUPTED", false],
    ]);
  });

  test("an in-session loop is active only while the project's loop file names it and says active: true", () => {
    const dir = projectWith([{ id: "h1", mode: "hook" }]);
    assert.deepEqual(states(dir, false), [["h1", "stale", false]], "no loop file");
    mkdirSync(join(dir, ".claude"));
    const loopFile = join(dir, ".claude", "ralph-loop.local.md");
    writeFileSync(loopFile, "---\nactive: true\niteration: 2\nrun_id: h1\n---\nprompt\n");
    assert.deepEqual(states(dir, false), [["h1", "running", true]]);
    writeFileSync(loopFile, "---\nactive: false\niteration: 2\nrun_id: h1\n---\nprompt\n");
    assert.deepEqual(states(dir, false), [["h1", "stale", false]], "cancelled or ended");
    writeFileSync(loopFile, "---\nactive: true\niteration: 1\nrun_id: h2\n---\nprompt\n");
    assert.deepEqual(states(dir, false), [["h1", "stale", false]], "a newer loop replaced it");
  });
});

test("a listing keeps what it read of the runners' records for the next one while none changed; a record ralph replaced is read again", () => {
  const dir = projectWith([{ id: "r", mode: "run" }]);
  const runDir = join(dir, ".ralph", "runs", "r");
  // Later than the records' last change by more than the settling time, so that what is read may be kept.
  const listing = () => listRuns(dir, () => true, new Date(Date.now() + 60_000)).map((run) => run.state);
  assert.deepEqual(listing(), ["running"]);
  const entry = readLedgerEntry(runDir);
  assert.ok(entry);
  // Rewritten in place, which ralph never does: the records' directory is unchanged and the kept record
  // answers (the control: the cache is in use).
  writeFileSync(entryFile(canonical(runDir), process.env), `${JSON.stringify({ ...entry, runner: null })}\n`);
  assert.deepEqual(listing(), ["running"]);
  updateLedgerEntry(runDir, { runner: null });
  assert.deepEqual(listing(), ["stale"]);
});

test("a listing reads each run's record as one run's reading does: through a linked path, by either digest, none for a foreign run", () => {
  const dir = projectWith([
    { id: "a", mode: "run", ended: true },
    { id: "b", mode: "run" },
  ]);
  mkdirSync(join(dir, ".ralph", "runs", "foreign"));
  const link = `${dir}-link`;
  symlinkSync(dir, link);
  dirs.push(link);
  const runs = join(link, ".ralph", "runs");
  for (const count of [1, 1000]) {
    const read = ledgerReader(runs, count);
    for (const id of ["a", "b", "foreign"]) {
      const entry = readLedgerEntry(join(runs, id));
      const listed = entry === null ? null : { runner: entry.runner };
      assert.deepEqual(read.entry(id), listed, `${id} (${count} runs)`);
    }
    assert.notEqual(read.entry("a"), null);
    assert.equal(read.entry("foreign"), null);
  }
  // The whole listing says what each run's own summary says.
  const now = new Date();
  const alive = () => false;
  assert.deepEqual(
    listRuns(link, alive, now).map((run) => [run.id, run.state]),
    ["a", "b", "foreign"]
      .map((id) => [id, summariseRun(link, id, alive, now).summary.state])
      .sort((x, y) => (x[1] === "foreign" ? -1 : 0) - (y[1] === "foreign" ? -1 : 0)),
  );
});
