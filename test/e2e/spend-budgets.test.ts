// The spend ledger against hostile agents and across runs: a child's agent cannot change what its parent
// counts by writing its status.json; a --parallel parent's --max-cost holds for its children together; a
// project's daily budget spent by one run stops the next run before its first iteration.
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { readEvents, readStatus, runRalph, spendAgentEnv, startRalph } from "../helpers/cli.js";
import { waitFor } from "../helpers/wait.js";
import { isolateGitConfig, storiesRepo, tempRepo } from "../helpers/git-repo.js";

after(isolateGitConfig());

const runDir = (repo: string, id: string) => join(repo, ".ralph", "runs", id);
/** A state directory of the test's own: its spend ledger holds only this test's calls. */
const stateHome = () => mkdtempSync(join(tmpdir(), "ralph-spend-state-"));

/** Every call record of the ledger under `state`. */
function ledger(state: string): Array<Record<string, unknown>> {
  const days = join(state, "ralph", "spend", "days");
  return readdirSync(days).flatMap((name) =>
    readFileSync(join(days, name), "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as Record<string, unknown>),
  );
}

const sum = (calls: Array<Record<string, unknown>>): number =>
  Math.round(calls.reduce((total, call) => total + (call.cost_usd as number), 0) * 1e6) / 1e6;

/** The `start`/`end` lines the spend agent logged. */
function agentLog(file: string): string[][] {
  return existsSync(file)
    ? readFileSync(file, "utf8")
        .trim()
        .split("\n")
        .map((line) => line.split(" "))
    : [];
}

describe("spend: what a child's agent writes is not what its parent counts", () => {
  test("a child's agent writing a huge cost_usd into its status.json does not end the family", async () => {
    const repo = storiesRepo();
    const state = stateHome();
    // Each child's agent forges $1e9 while it runs, until its parent's status shows it (old ralph) or 3 s of
    // the parent's looks (every 200 ms) pass.
    const env = spendAgentEnv(repo, {
      XDG_STATE_HOME: state,
      SPEND_FORGE: "1000000000",
      SPEND_FORGE_SEEN: join(runDir(repo, "h"), "status.json"),
    });
    const result = await runRalph(
      [
        "run",
        "--agent",
        "claude",
        "--tasks",
        "prd.json",
        "--parallel",
        "1",
        "--max-cost",
        "0.5",
        "--stall-limit",
        "0",
        "--name",
        "h",
        "work",
      ],
      repo,
      env,
      90_000,
    );
    assert.equal(result.code, 0, result.stdout + result.stderr);
    const status = readStatus(runDir(repo, "h"));
    assert.equal(status.exit_reason, "DONE", String(status.last_action));
    assert.equal(status.cost_usd, 0.03, "three children of $0.01 each");
    assert.equal(sum(ledger(state)), 0.03);
    assert.deepEqual(
      readEvents(runDir(repo, "h"))
        .filter((event) => event.type === "child_ended")
        .map((event) => event.cost_usd),
      [0.01, 0.01, 0.01],
    );
  });

  test("a child's agent writing a negative cost_usd does not give the next child more budget", async () => {
    const repo = storiesRepo();
    const state = stateHome();
    const log = join(repo, "..", `${repo.split("/").pop()}-log`);
    // The first child's agent forges -$1000 until the third child has started; the second ends at once.
    const env = spendAgentEnv(repo, {
      XDG_STATE_HOME: state,
      SPEND_LOG: log,
      SPEND_FORGE: "-1000",
      SPEND_FORGE_UNTIL: join(runDir(repo, "n-3"), "settings.json"),
      SPEND_FORGE_MS: "20000",
    });
    const agent = join(repo, "..", `${repo.split("/").pop()}-agent.sh`);
    // Only the first child forges: the others are the plain spend agent.
    writeFileSync(
      agent,
      `#!/bin/sh\n[ "$RALPH_RUN_ID" = n-1 ] || unset SPEND_FORGE\nexec '${env.RALPH_CLAUDE_BIN}' "$@"\n`,
      { mode: 0o755 },
    );
    const result = await runRalph(
      [
        "run",
        "--agent",
        "claude",
        "--tasks",
        "prd.json",
        "--parallel",
        "2",
        "--max-cost",
        "0.5",
        "--stall-limit",
        "0",
        "--name",
        "n",
        "work",
      ],
      repo,
      { ...env, RALPH_CLAUDE_BIN: agent },
      90_000,
    );
    assert.equal(result.code, 0, result.stdout + result.stderr);
    const third = JSON.parse(readFileSync(join(runDir(repo, "n-3"), "settings.json"), "utf8")) as {
      maxCostUsd: number;
    };
    assert.ok(third.maxCostUsd <= 0.5, `the third child was given $${third.maxCostUsd} of a $0.5 budget`);
    assert.equal(third.maxCostUsd, 0.49, "the budget less the second child's $0.01 (the first was still running)");
    assert.equal(readStatus(runDir(repo, "n")).cost_usd, 0.03);
  });
});

describe("spend: a --parallel parent's --max-cost covers its children together", () => {
  /** Three children, or three plain runs, start an iteration each at the same time; each call costs $0.01. */
  async function threeAtOnce(
    repo: string,
    state: string,
    start: (env: NodeJS.ProcessEnv) => Promise<void>,
  ): Promise<string[][]> {
    const log = join(repo, "..", `${repo.split("/").pop()}-log`);
    const gate = join(repo, "..", `${repo.split("/").pop()}-gate`);
    // Each first iteration waits at the gate until all three have started: they run together.
    const env = spendAgentEnv(repo, { XDG_STATE_HOME: state, SPEND_LOG: log, SPEND_GATE: gate });
    const opened = (async () => {
      await waitFor(
        () => agentLog(log).filter((line) => line[0] === "start").length >= 3,
        "three iterations to start",
        60_000,
      );
      writeFileSync(gate, "");
    })();
    await start(env);
    await opened;
    return agentLog(log);
  }

  test("three children starting together start no iteration once the family's budget is spent", async () => {
    const repo = storiesRepo();
    const state = stateHome();
    // The agent never marks its story done: each child would go on until its budget stops it.
    const lines = await threeAtOnce(repo, state, async (env) => {
      const result = await runRalph(
        [
          "run",
          "--agent",
          "claude",
          "--tasks",
          "prd.json",
          "--parallel",
          "3",
          "--max-cost",
          "0.025",
          "--stall-limit",
          "0",
          "-n",
          "5",
          "--name",
          "f",
          "work",
        ],
        repo,
        { ...env, SPEND_USAGE: "1000,200,0,0", SPEND_UNDONE: "1" },
        90_000,
      );
      assert.equal(result.code, 3, result.stdout + result.stderr);
    });
    const starts = lines.filter((line) => line[0] === "start");
    assert.equal(starts.length, 3, `one iteration per child, none after $0.03 was spent: ${JSON.stringify(starts)}`);
    assert.deepEqual(starts.map((line) => line[1]).sort(), ["f-1", "f-2", "f-3"]);
    assert.equal(sum(ledger(state)), 0.03, "the only overshoot: the three iterations in flight together");
    for (const child of ["f-1", "f-2", "f-3"]) {
      const status = readStatus(runDir(repo, child));
      // Whichever comes first at the child's next boundary: its own look at the ledger, or its parent's STOP.
      if (status.exit_reason === "BUDGET_EXCEEDED")
        assert.match(
          String(status.last_action),
          /run f and its child runs together spent \$0\.0300, --max-cost \$0\.025 of run f/,
        );
      else assert.equal(status.exit_reason, "STOPPED");
      assert.equal(status.iteration, 1);
    }
    assert.equal(readStatus(runDir(repo, "f")).exit_reason, "BUDGET_EXCEEDED");
    assert.equal(readStatus(runDir(repo, "f")).cost_usd, 0.03);
  });

  test("control: the same budget given to each of three runs, as a child's remainder was, spends 3.6 times it", async () => {
    const repo = storiesRepo();
    const state = stateHome();
    // What each child got before: what was left when it started ($0.025 for all three, started together).
    const lines = await threeAtOnce(repo, state, async (env) => {
      const runs = ["US-1", "US-2", "US-3"].map((task, i) =>
        runRalph(
          [
            "run",
            "--agent",
            "claude",
            "--tasks",
            "prd.json",
            "--task",
            task,
            "--worktree",
            "--max-cost",
            "0.025",
            "--stall-limit",
            "0",
            "-n",
            "5",
            "--name",
            `c-${i + 1}`,
            "work",
          ],
          repo,
          { ...env, SPEND_USAGE: "1000,200,0,0", SPEND_UNDONE: "1" },
          90_000,
        ),
      );
      for (const result of await Promise.all(runs)) assert.equal(result.code, 3, result.stdout + result.stderr);
    });
    assert.equal(lines.filter((line) => line[0] === "start").length, 9, "three iterations each");
    assert.equal(sum(["c-1", "c-2", "c-3"].map((id) => readStatus(runDir(repo, id)))), 0.09);
  });
});

describe("spend: project budgets per day", () => {
  test("a daily budget spent by one run stops the next run before its first iteration", async () => {
    const repo = tempRepo();
    const state = stateHome();
    writeFileSync(join(repo, "ralph.yaml"), "budget:\n  daily: 0.02\n");
    const env = spendAgentEnv(repo, { XDG_STATE_HOME: state });
    const first = await runRalph(
      ["run", "--agent", "claude", "-n", "5", "--stall-limit", "0", "--name", "one", "work"],
      repo,
      env,
    );
    assert.equal(first.code, 3, first.stdout + first.stderr);
    assert.equal(readStatus(runDir(repo, "one")).iteration, 2, "$0.01, $0.02: the third iteration does not start");
    const second = await runRalph(["run", "--agent", "claude", "-n", "5", "--name", "two", "work"], repo, env);
    assert.equal(second.code, 3, second.stdout + second.stderr);
    const status = readStatus(runDir(repo, "two"));
    assert.deepEqual([status.exit_reason, status.iteration], ["BUDGET_EXCEEDED", 0]);
    assert.match(
      second.stdout,
      /BUDGET_EXCEEDED: the project's daily budget is spent: \$0\.0200 today \(UTC\), budget\.daily \$0\.02 in ralph\.yaml/,
    );
    // Another project is not held by this one's budget.
    const other = tempRepo();
    const elsewhere = await runRalph(
      ["run", "--agent", "claude", "-n", "1", "--name", "x", "work"],
      other,
      spendAgentEnv(other, { XDG_STATE_HOME: state }),
    );
    assert.equal(elsewhere.code, 3, elsewhere.stdout);
    assert.equal(readStatus(runDir(other, "x")).exit_reason, "MAX_ITERATIONS");
  });

  test("the user's daily budget holds across projects; with on_exhausted: wait the run waits for the next day", async () => {
    const repo = tempRepo();
    const other = tempRepo();
    const state = stateHome();
    const config = mkdtempSync(join(tmpdir(), "ralph-spend-config-"));
    await import("node:fs").then((fs) => fs.mkdirSync(join(config, "ralph")));
    writeFileSync(join(config, "ralph", "config.yaml"), "budget:\n  daily: 0.01\n  on_exhausted: wait\n");
    const env = spendAgentEnv(repo, { XDG_STATE_HOME: state, XDG_CONFIG_HOME: config });
    const first = await runRalph(["run", "--agent", "claude", "-n", "1", "--name", "one", "work"], repo, env);
    assert.equal(first.code, 3, first.stdout + first.stderr);
    const waiting = startRalph(["run", "--agent", "claude", "-n", "1", "--name", "two", "work"], other, {
      ...env,
      RALPH_CLAUDE_BIN: spendAgentEnv(other).RALPH_CLAUDE_BIN,
    });
    await waitFor(
      () =>
        existsSync(join(runDir(other, "two"), "status.json")) && readStatus(runDir(other, "two")).state === "waiting",
      "the second run to wait",
      30_000,
    );
    const status = readStatus(runDir(other, "two"));
    const midnight = new Date(Math.floor(Date.now() / 86_400_000 + 1) * 86_400_000).toISOString();
    assert.deepEqual([status.iteration, status.resume_at], [0, midnight]);
    assert.match(String(status.last_action), /^budget spent: waiting until /);
    const event = readEvents(runDir(other, "two")).find((e) => e.type === "waiting_limit");
    assert.match(
      String(event?.message),
      /^your daily budget is spent: \$0\.0100 today \(UTC\), budget\.daily \$0\.01 in the user config/,
    );
    assert.equal((await runRalph(["stop", "two"], other, env)).code, 0);
    const result = await waiting.done;
    assert.equal(readStatus(runDir(other, "two")).exit_reason, "STOPPED", result.stdout);
  });
});

describe("spend: agents that report tokens but no cost", () => {
  test("--max-tokens stops the run once the tokens of a kind, or of all kinds, reach the cap", async () => {
    const repo = tempRepo();
    const state = stateHome();
    // No cost, and a model the price table does not know: the cost is not known at all.
    const env = spendAgentEnv(repo, { XDG_STATE_HOME: state, SPEND_COST: "none", SPEND_MODEL: "some-model" });
    const byKind = await runRalph(
      [
        "run",
        "--agent",
        "claude",
        "-n",
        "9",
        "--stall-limit",
        "0",
        "--max-tokens",
        "output=500",
        "--name",
        "k",
        "work",
      ],
      repo,
      env,
    );
    assert.equal(byKind.code, 3, byKind.stdout + byKind.stderr);
    assert.deepEqual(
      [readStatus(runDir(repo, "k")).exit_reason, readStatus(runDir(repo, "k")).iteration],
      ["BUDGET_EXCEEDED", 3],
    );
    assert.match(byKind.stdout, /BUDGET_EXCEEDED: 600 output tokens used, --max-tokens output=500/);
    assert.match(
      byKind.stdout,
      /3 iterations, no cost reported, tokens in 3\.0k · out 600 · cache read 15\.0k · cache write 900 · total 19\.5k/,
    );
    const total = await runRalph(
      ["run", "--agent", "claude", "-n", "9", "--stall-limit", "0", "--max-tokens", "10k", "--name", "t", "work"],
      repo,
      env,
    );
    assert.match(total.stdout, /BUDGET_EXCEEDED: 13000 total tokens used, --max-tokens 10000/);
    assert.equal(readStatus(runDir(repo, "t")).iteration, 2);
  });

  test("a known model's tokens are priced from the dated table: --max-cost holds on the estimate, marked as one", async () => {
    const repo = tempRepo();
    const state = stateHome();
    const env = spendAgentEnv(repo, { XDG_STATE_HOME: state, SPEND_COST: "none", SPEND_MODEL: "claude-sonnet-4-5" });
    // 1000 in × $3 + 200 out × $15 + 5000 cache read × $0.30 + 300 cache write × $3.75 per million: $0.008625 a call.
    const result = await runRalph(
      ["run", "--agent", "claude", "-n", "9", "--stall-limit", "0", "--max-cost", "0.02", "--name", "e", "work"],
      repo,
      env,
    );
    assert.equal(result.code, 3, result.stdout + result.stderr);
    assert.equal(readStatus(runDir(repo, "e")).iteration, 3);
    assert.match(result.stdout, /3 iterations, ~\$0\.0259 \(estimated from tokens, prices of \d{4}-\d{2}-\d{2}\)/);
    const calls = ledger(state);
    assert.deepEqual(
      calls.map((call) => [call.cost_usd, call.cost_source]),
      [
        [0.008625, "computed"],
        [0.008625, "computed"],
        [0.008625, "computed"],
      ],
    );
    const listed = await runRalph(["list"], repo, env);
    assert.match(listed.stdout, /~\$0\.0259/);
  });
});
