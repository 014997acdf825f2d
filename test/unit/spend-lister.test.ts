// spendLister (src/spend/spend-of.ts), the spend of many runs read at once for a listing: for every run it
// gives what spendOf gives run by run, on a ledger holding families, children, other projects, calls from
// before a run's first day, runs the ledger does not know and a record that is not ralph's.
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spendLister, spendOf } from "../../src/spend/spend-of.js";
import { appendCall, runFileName, spendDir, writeRun } from "../../src/spend/spend-ledger.js";
import type { SpendCall, SpendRun } from "../../src/spend/spend-record.js";

const dirs: string[] = [];
after(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

const DAY = 86_400_000;
const NOW = new Date("2026-12-05T12:00:00.000Z");

function scratch(prefix: string): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  dirs.push(dir);
  return dir;
}

function runRecord(project: string, run: string, patch: Partial<SpendRun> = {}): SpendRun {
  const at = new Date(NOW.getTime() - DAY).toISOString();
  return {
    v: 1,
    kind: "run",
    project,
    run,
    parent: null,
    family: run,
    family_since: at,
    started_at: at,
    agent: "command",
    model: null,
    family_max_cost_usd: null,
    family_max_tokens: null,
    project_budget: null,
    user_budget: null,
    ...patch,
  };
}

function callOf(
  project: string,
  run: string,
  daysAgo: number,
  cost: number | null,
  patch: Partial<SpendCall> = {},
): SpendCall {
  return {
    v: 1,
    kind: "call",
    at: new Date(NOW.getTime() - daysAgo * DAY).toISOString(),
    project,
    run,
    parent: null,
    family: run,
    role: "iteration",
    iteration: 1,
    agent: "command",
    model: null,
    cost_usd: cost,
    cost_source: cost === null ? "unknown" : "reported",
    tokens: { input: 10, output: 20, cache_read: 30, cache_write: 40 },
    duration_ms: 5,
    ...patch,
  };
}

describe("spendLister", () => {
  for (const filler of [0, 40]) {
    test(`gives each run what spendOf gives it (${filler} more runs: ${filler > 32 ? "node:crypto" : "the plain digest"} names the records)`, () => {
      const project = scratch("ralph-spend-project-");
      const env = { ...process.env, XDG_STATE_HOME: scratch("ralph-spend-state-") };
      const two = new Date(NOW.getTime() - 2 * DAY).toISOString();
      writeRun(runRecord(project, "lead", { family_since: two, started_at: two }), env);
      writeRun(runRecord(project, "child", { parent: "lead", family: "lead" }), env);
      writeRun(runRecord(project, "solo"), env);
      writeRun(runRecord(project, "late"), env);
      // Not a record ralph wrote: a first day that is no date.
      writeRun(runRecord(project, "odd", { family_since: "soon", started_at: "soon" }), env);
      for (const call of [
        callOf(project, "lead", 2, 1.5),
        callOf(project, "lead", 0, 0.25),
        callOf(project, "child", 2, 4, { parent: "lead", family: "lead" }),
        callOf(project, "child", 1, 2, { parent: "lead", family: "lead" }),
        callOf(project, "child", 0, null, { parent: "lead", family: "lead" }),
        callOf(project, "solo", 1, 0.5),
        callOf(project, "solo", 1, null),
        callOf(project, "solo", 3, 8),
        callOf("/elsewhere", "solo", 1, 16),
        callOf(project, "late", 3, 32),
        callOf(project, "unknown", 1, 64),
      ])
        appendCall(call, env);
      for (let i = 0; i < filler; i++) writeRun(runRecord(project, `filler-${i}`), env);
      const ids = [
        "lead",
        "child",
        "solo",
        "late",
        "unknown",
        "missing",
        ...Array.from({ length: filler }, (_, i) => `filler-${i}`),
      ];
      const lister = spendLister(project, ids, env, NOW);
      for (const id of ids) assert.deepEqual(lister(id), spendOf(project, id, env, NOW), id);
      assert.deepEqual(
        [
          lister("lead").calls,
          lister("child").calls,
          lister("solo").calls,
          lister("late").calls,
          lister("unknown").calls,
        ],
        [5, 2, 2, 0, 0],
      );
      assert.equal(lister("lead").cost_usd, 1.5 + 0.25 + 4 + 2);
      // A record that is not ralph's (spendOf throws on its date): nothing spent, the listing goes on.
      assert.equal(spendLister(project, ["odd"], env, NOW)("odd").calls, 0);
    });
  }

  test("reads a record changed since the last listing: spend follows the ledger as it is", () => {
    const project = scratch("ralph-spend-project-");
    const env = { ...process.env, XDG_STATE_HOME: scratch("ralph-spend-state-") };
    writeRun(runRecord(project, "r"), env);
    appendCall(callOf(project, "r", 0, 1), env);
    assert.equal(spendLister(project, ["r"], env, NOW)("r").calls, 1);
    writeFileSync(join(spendDir(env), "runs", runFileName(project, "r")), "{}\n");
    assert.equal(spendLister(project, ["r"], env, NOW)("r").calls, 0);
  });

  test("keeps each run's first day for the next listing while the ledger's run records are unchanged; reads a record ralph replaced", () => {
    // Later than the records' last change by more than the settling time, so that what is read may be kept.
    const now = new Date(Date.now() + 60_000);
    const project = scratch("ralph-spend-project-");
    const env = { ...process.env, XDG_STATE_HOME: scratch("ralph-spend-state-") };
    const dayBefore = new Date(now.getTime() - DAY).toISOString();
    const today = now.toISOString();
    writeRun(runRecord(project, "r", { family_since: dayBefore, started_at: dayBefore }), env);
    appendCall(callOf(project, "r", 0, 1, { at: dayBefore }), env);
    assert.equal(spendLister(project, ["r"], env, now)("r").calls, 1);
    // Rewritten in place, which ralph never does, so that the call is before the run's first day: the
    // records' directory is unchanged and the kept first day answers (the control: the cache is in use).
    const later = `${JSON.stringify(runRecord(project, "r", { family_since: today, started_at: today }))}\n`;
    writeFileSync(join(spendDir(env), "runs", runFileName(project, "r")), later);
    assert.equal(spendLister(project, ["r"], env, now)("r").calls, 1);
    writeRun(runRecord(project, "r", { family_since: today, started_at: today }), env);
    assert.equal(spendLister(project, ["r"], env, now)("r").calls, 0);
  });
});
