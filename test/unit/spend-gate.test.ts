// The budgets' check before each iteration (src/spend/spend-gate.ts) on ledger calls made up here, and what
// the engine makes of its verdict: BUDGET_EXCEEDED naming the budget, or a wait until the next UTC day or
// week shown like a usage-limit wait, after which the budgets are checked again.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { checkBudgets, weekStart, type GateVerdict } from "../../src/spend/spend-gate.js";
import type { Budget, SpendCall, SpendRun } from "../../src/spend/spend-record.js";
import { step } from "../../src/engine/step.js";
import type { Input, Phase, Step } from "../../src/engine/phase.js";
import { eventSummary, eventTitle } from "../../src/notify/event-summary.js";
import { machine } from "../fixtures/engine-machine.js";
import { userConfigFile } from "../../src/spend/budget-config.js";
import { SpendBook } from "../../src/spend/spend-book.js";
import { dollars } from "../../src/spend/spend-totals.js";
import { mkdtempSync, rmSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";

const DAY = 86_400_000;
// Wednesday 2026-12-02, 12:00 UTC.
const NOW = Date.parse("2026-12-02T12:00:00.000Z");

const budget = (patch: Partial<Budget>): Budget => ({
  daily_usd: null,
  weekly_usd: null,
  on_exhausted: "stop",
  ...patch,
});

function run(patch: Partial<SpendRun> = {}): SpendRun {
  return {
    v: 1,
    kind: "run",
    project: "/p",
    run: "r",
    parent: null,
    family: "r",
    family_since: new Date(NOW - 60_000).toISOString(),
    started_at: new Date(NOW - 60_000).toISOString(),
    agent: "claude",
    model: null,
    family_max_cost_usd: null,
    family_max_tokens: null,
    project_budget: null,
    user_budget: null,
    ...patch,
  };
}

function call(atMs: number, cost: number | null, patch: Partial<SpendCall> = {}): SpendCall {
  return {
    v: 1,
    kind: "call",
    at: new Date(atMs).toISOString(),
    project: "/p",
    run: "other",
    parent: null,
    family: "other",
    role: "iteration",
    iteration: 1,
    agent: "claude",
    model: null,
    cost_usd: cost,
    cost_source: cost === null ? "unknown" : "reported",
    tokens: { input: 0, output: 0, cache_read: 0, cache_write: 0 },
    duration_ms: 1,
    ...patch,
  };
}

describe("spend gate: daily and weekly budgets", () => {
  test("the week starts on Monday 00:00 UTC", () => {
    assert.equal(new Date(weekStart(NOW)).toISOString(), "2026-11-30T00:00:00.000Z");
    assert.equal(new Date(weekStart(Date.parse("2026-11-30T00:00:00.000Z"))).toISOString(), "2026-11-30T00:00:00.000Z");
    assert.equal(new Date(weekStart(Date.parse("2026-12-06T23:59:59.000Z"))).toISOString(), "2026-11-30T00:00:00.000Z");
  });

  test("the project's daily budget counts today's calls of the project only", () => {
    const r = run({ project_budget: budget({ daily_usd: 1 }) });
    const yesterday = call(NOW - DAY, 5);
    const elsewhere = call(NOW - 1000, 5, { project: "/q" });
    assert.equal(checkBudgets(r, [yesterday, elsewhere, call(NOW - 1000, 0.99)], NOW), null);
    assert.deepEqual(checkBudgets(r, [yesterday, elsewhere, call(NOW - 1000, 0.6), call(NOW - 500, 0.4)], NOW), {
      kind: "exceeded",
      detail: "the project's daily budget is spent: $1.0000 today (UTC), budget.daily $1 in ralph.yaml",
    });
  });

  test("the weekly budget counts the calls since Monday, of every day", () => {
    const r = run({ project_budget: budget({ daily_usd: 10, weekly_usd: 3 }) });
    const lastWeek = call(weekStart(NOW) - 1000, 50);
    const monday = call(weekStart(NOW) + 1000, 2);
    assert.equal(checkBudgets(r, [lastWeek, monday, call(NOW - 1000, 0.5)], NOW), null);
    const verdict = checkBudgets(r, [lastWeek, monday, call(NOW - 1000, 1)], NOW);
    assert.deepEqual(verdict, {
      kind: "exceeded",
      detail:
        "the project's weekly budget is spent: $3.0000 this week (from Monday, UTC), budget.weekly $3 in ralph.yaml",
    });
  });

  test("the user's budget counts every project; with on_exhausted: wait the verdict is a wait until the next UTC midnight or Monday", () => {
    const r = run({ user_budget: budget({ daily_usd: 1, weekly_usd: 2, on_exhausted: "wait" }) });
    const daily = checkBudgets(r, [call(NOW - 1000, 1, { project: "/q" })], NOW);
    assert.deepEqual(daily, {
      kind: "wait",
      untilMs: Date.parse("2026-12-03T00:00:00.000Z"),
      detail: "your daily budget is spent: $1.0000 today (UTC), budget.daily $1 in the user config (every project)",
    });
    const weekly = checkBudgets(r, [call(weekStart(NOW) + 1000, 1.5, { project: "/q" }), call(NOW - 1000, 0.5)], NOW);
    assert.equal(weekly?.kind, "wait");
    assert.equal(weekly?.kind === "wait" ? new Date(weekly.untilMs).toISOString() : null, "2026-12-07T00:00:00.000Z");
  });

  test("calls whose cost is not known do not count as dollars", () => {
    const r = run({ project_budget: budget({ daily_usd: 0.01 }) });
    assert.equal(checkBudgets(r, [call(NOW - 1000, null), call(NOW - 900, null)], NOW), null);
  });

  test("a family's --max-cost counts every run of the family since it started, not another family's", () => {
    const child = run({ run: "f-2", parent: "f", family: "f", family_max_cost_usd: 0.025 });
    const family = (id: string, cost: number) =>
      call(NOW - 1000, cost, { run: id, parent: id === "f" ? null : "f", family: "f" });
    assert.equal(checkBudgets(child, [family("f-1", 0.01), family("f-2", 0.01), call(NOW - 1000, 5)], NOW), null);
    assert.deepEqual(checkBudgets(child, [family("f-1", 0.01), family("f-2", 0.01), family("f-3", 0.01)], NOW), {
      kind: "exceeded",
      detail: "run f and its child runs together spent $0.0300, --max-cost $0.025 of run f",
    });
  });
});

describe("spend gate in the engine", () => {
  const boundary: Phase = { id: "boundary" };
  const clear = (nowMs: number, verdict?: GateVerdict): Input => ({
    type: "sentinel",
    stop: false,
    stopNow: false,
    pause: false,
    nowMs,
    ...(verdict ? { budget: verdict } : {}),
  });
  const entries = (result: Step) =>
    result.effects.flatMap((effect) => (effect.kind === "record" ? effect.entries : []));

  test("a spent budget ends the run BUDGET_EXCEEDED before the iteration, naming the budget", () => {
    const result = step(
      machine(boundary),
      clear(1000, { kind: "exceeded", detail: "the project's daily budget is spent" }),
    );
    assert.equal(result.machine.phase.id, "ended");
    assert.deepEqual(result.machine.phase.id === "ended" ? result.machine.phase.ending : null, {
      reason: "BUDGET_EXCEEDED",
      detail: "the project's daily budget is spent",
    });
  });

  test("on_exhausted: wait: a wait like a usage limit's, then the budgets are checked again", () => {
    const until = 5 * DAY;
    const waiting = step(
      machine(boundary),
      clear(1000, { kind: "wait", untilMs: until, detail: "your daily budget is spent" }),
    );
    assert.equal(waiting.machine.phase.id, "waitingLimit");
    assert.deepEqual(
      waiting.effects.map((effect) => effect.kind),
      ["record", "sleep"],
    );
    const event = entries(waiting).find((entry) => entry.kind === "event");
    assert.deepEqual(event?.kind === "event" ? event.body : null, {
      type: "waiting_limit",
      iteration: 2,
      message: "your daily budget is spent",
      reset_at: new Date(until).toISOString(),
      resume_at: new Date(until).toISOString(),
      budget: true,
    });
    assert.equal(waiting.machine.tally.iteration, 1, "no iteration was counted");
    // Before the new day: still waiting; at it: back at the boundary, where the next look checks again.
    assert.equal(step(waiting.machine, clear(until - 1)).machine.phase.id, "waitingLimit");
    const over = step(waiting.machine, clear(until));
    assert.equal(over.machine.phase.id, "boundary");
    assert.deepEqual(
      over.effects.map((effect) => effect.kind),
      ["record", "look"],
    );
    assert.deepEqual(
      entries(over).flatMap((entry) => (entry.kind === "log" ? [entry.line] : [])),
      ["budget wait over; the budgets are checked again before iteration 2"],
    );
    // Still spent at the next look: another wait, never an iteration.
    assert.equal(
      step(
        over.machine,
        clear(until + 1, { kind: "wait", untilMs: until + DAY, detail: "your weekly budget is spent" }),
      ).machine.phase.id,
      "waitingLimit",
    );
    // A STOP while waiting ends the run.
    const stopped = step(waiting.machine, { type: "sentinel", stop: true, stopNow: false, pause: false, nowMs: 2000 });
    assert.equal(stopped.machine.phase.id, "ended");
  });

  test("a notification of a budget wait says so, not a usage limit", () => {
    const base = {
      v: 1,
      run: "r1",
      project: "/p",
      ts: "2026-12-02T12:00:00.000Z",
      type: "waiting_limit",
      iteration: 2,
      message: "your daily budget is spent",
      reset_at: null,
      resume_at: "2026-12-03T00:00:00.000Z",
    };
    assert.equal(
      eventSummary({ ...base, budget: true }),
      "ralph run r1: budget spent, waiting until 2026-12-03T00:00:00.000Z: your daily budget is spent",
    );
    assert.equal(eventTitle({ ...base, budget: true }), "ralph: waiting for the budget");
    assert.equal(eventTitle(base), "ralph: waiting for a usage limit");
  });

  test("a run_ended notification gives the run's spend as every view words it, never $0.0000", () => {
    const tokens = { input: 1000, output: 200, cache_read: 5000, cache_write: 300, total: 6500 };
    const ended = {
      type: "run_ended",
      run: "r1",
      reason: "MAX_ITERATIONS",
      exit_code: 3,
      detail: "cap",
      spend: { cost_usd: null, cost_source: "none", calls: 1, tokens },
    };
    assert.equal(
      eventSummary(ended),
      "ralph run r1: ended MAX_ITERATIONS (exit 3) · no cost reported · tokens in 1.0k · out 200 · cache read 5.0k · cache write 300 · total 6.5k: cap",
    );
    const estimated = eventSummary({ ...ended, spend: { ...ended.spend, cost_usd: 0.0086, cost_source: "computed" } });
    assert.match(estimated, /· ~\$0\.0086 \(estimated from tokens, prices of \d{4}-\d{2}-\d{2}\) · tokens in 1\.0k/);
  });
});

describe("budget config", () => {
  test("the user config is under XDG_CONFIG_HOME, else HOME, else the user's home directory: never a relative path", () => {
    assert.equal(userConfigFile({ XDG_CONFIG_HOME: "/c", HOME: "/h" }), "/c/ralph/config.yaml");
    assert.equal(userConfigFile({ XDG_CONFIG_HOME: "relative", HOME: "/h" }), "/h/.config/ralph/config.yaml");
    assert.equal(userConfigFile({}), join(homedir(), ".config", "ralph", "config.yaml"));
  });
});

describe("a --parallel family's resolve runs in the spend ledger", () => {
  test("a resolve run takes its family's --max-cost, its calls count toward it for every run of the family, and it is stopped by it", () => {
    const state = mkdtempSync(join(tmpdir(), "ralph-spend-"));
    const project = mkdtempSync(join(tmpdir(), "ralph-proj-"));
    try {
      const env = { XDG_STATE_HOME: state };
      const now = new Date(NOW);
      const open = (runId: string, parent: string | null, maxCostUsd: number | null) => {
        const book = new SpendBook(env);
        book.open({
          projectDir: project,
          runId,
          parent,
          agent: "claude",
          model: null,
          maxCostUsd,
          maxTokens: null,
          budgets: { project: null, user: null },
          now,
        });
        return book;
      };
      const spend = (book: SpendBook, costUsd: number, atMs: number) =>
        book.record({
          role: "iteration",
          iteration: 1,
          agent: "claude",
          model: null,
          costUsd,
          tokens: null,
          durationMs: 1,
          at: new Date(atMs),
        });
      const parent = open("f", null, 0.05);
      const child = open("f-1", "f", 0.05);
      // A resolve run is started with what was left of the budget; the family's cap is the one it counts against.
      const resolver = open("f-resolve-1", "f", 0.03);
      assert.deepEqual([resolver.run?.family, resolver.run?.family_max_cost_usd], ["f", 0.05]);
      spend(child, 0.02, NOW + 1000);
      assert.equal(child.check(NOW + 2000), null, "the child's own spend is under the family's budget");
      // The control: a run outside the family (a resolve run that did not take its parent's record would be one) does not count.
      spend(open("g-resolve-1", null, null), 1, NOW + 2500);
      assert.equal(child.check(NOW + 3000), null, "another family's spend does not count");
      spend(resolver, 0.03, NOW + 3000);
      assert.equal(dollars(parent.totalsOf("f", NOW + 4000)), 0.05, "the family's spend includes the resolve run's");
      assert.equal(dollars(parent.totalsOf("f-resolve-1", NOW + 4000)), 0.03);
      const over = {
        kind: "exceeded",
        detail: "run f and its child runs together spent $0.0500, --max-cost $0.05 of run f",
      };
      assert.deepEqual(child.check(NOW + 4000), over, "the resolve run's spend stops a sibling");
      assert.deepEqual(resolver.check(NOW + 4000), over, "and the resolve run itself");
      assert.deepEqual(open("f-2", "f", 0).check(NOW + 4000), over, "and a child started later");
    } finally {
      rmSync(state, { recursive: true, force: true });
      rmSync(project, { recursive: true, force: true });
    }
  });
});
