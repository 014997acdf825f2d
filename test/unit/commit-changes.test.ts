import { test } from "node:test";
import assert from "node:assert/strict";
import { commitChanges } from "../../src/engine/commit-changes.js";
import type { EngineIo } from "../../src/engine/engine-io.js";
import type { EngineOptions } from "../../src/engine/run-engine.js";
import type { RunRecord } from "../../src/run/run-record.js";
import { ATTEMPT, finished } from "../fixtures/engine-machine.js";

type Outcome = Awaited<ReturnType<NonNullable<EngineIo["commitIteration"]>>>;

/** commitChanges with a fake commit step answering `outcome`; returns the run, the commits asked for and the log. */
async function commitWith(outcome: Outcome, { commit = true, interrupted = false } = {}) {
  const asked: unknown[] = [];
  const lines: string[] = [];
  const controller = new AbortController();
  if (interrupted) controller.abort();
  const io = {
    commitIteration: async (what: unknown) => {
      asked.push(what);
      return outcome;
    },
    signals: { interrupted: controller.signal },
  } as unknown as EngineIo;
  const options = {
    projectDir: "/p",
    workDir: "/p/.ralph/worktrees/r",
    runId: "r",
    commit,
    worktree: { path: "/p/.ralph/worktrees/r", branch: "ralph/r" },
  } as EngineOptions;
  const record = { log: (line: string) => lines.push(line) } as unknown as RunRecord;
  const run = await commitChanges(options, io, record, { ...ATTEMPT, task: "US-1: one" }, finished("ok"));
  return { run, asked, lines };
}

test("a commit is recorded on the run and logged with its branch", async () => {
  const { run, asked, lines } = await commitWith({ ok: true, commit: "a".repeat(40), files: 2 });
  assert.deepEqual(asked, [{ dir: "/p/.ralph/worktrees/r", runId: "r", iteration: 2, task: "US-1: one" }]);
  assert.deepEqual(run.kind === "finished" ? run.commit : "?", { sha: "a".repeat(40), files: 2 });
  assert.deepEqual(lines, ["iteration 2: committed 2 file(s) as aaaaaaaaaaaa on ralph/r"]);
});

test("nothing left to commit is null; a failure is kept as its message, never thrown", async () => {
  const none = await commitWith({ ok: true, commit: null, files: 0 });
  assert.equal(none.run.kind === "finished" ? none.run.commit : "?", null);
  const failed = await commitWith({ ok: false, message: "a merge is in progress" });
  assert.deepEqual(failed.run.kind === "finished" ? failed.run.commit : "?", { error: "a merge is in progress" });
  assert.deepEqual(failed.lines, ["iteration 2: nothing was committed: a merge is in progress"]);
});

test("no commit with --commit off, or once a signal arrived (the runner must end quickly)", async () => {
  for (const flags of [{ commit: false }, { interrupted: true }]) {
    const { run, asked } = await commitWith({ ok: true, commit: "b".repeat(40), files: 1 }, flags);
    assert.deepEqual(asked, []);
    assert.equal(run.kind === "finished" ? run.commit : "?", undefined);
  }
});
