// Spend shown one way, from the spend ledger, with the real pinned Claude Code CLI against the fake API:
// the same traffic (1000 input, 200 output, 5000 cache-read and 300 cache-write tokens per call) reads the
// same in run mode, hook mode, `status --json`, `list --json`, `report --format json` and the dashboard's data;
// an agent that reports no cost never shows $0.0000; and `ralph spend` over a ledger made by real runs of the
// demo agent and of Claude Code matches its golden files.
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fakeClaudeEnvironment, PINNED_CLAUDE_BIN } from "../fixtures/fake-anthropic-env.js";
import { startFakeAnthropic, textTurn, type FakeAnthropic } from "../fixtures/fake-anthropic.js";
import { RalphClaudeLab } from "../fixtures/ralph-claude-lab.js";
import { cleanEnv, runRalph } from "../helpers/cli.js";
import { readRunRow } from "../../src/ui/run-row.js";
import { spendChartData } from "../../src/ui/spend-chart-data.js";

const lab = new RalphClaudeLab();
const root = mkdtempSync(join(tmpdir(), "ralph-spend-views-"));
const children: ChildProcess[] = [];
const servers: FakeAnthropic[] = [];
after(async () => {
  for (const child of children)
    if (child.pid && child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  await Promise.all(servers.map((server) => server.close()));
  await lab.cleanup();
  rmSync(root, { recursive: true, force: true });
});

/** One ledger for every run of this file: the golden test reads what the others made. */
const state = join(root, "state");
const USAGE = { input: 1000, output: 200, cacheRead: 5000, cacheWrite: 300 };
/** Two calls of USAGE, as every JSON view gives tokens. */
const TWO_CALLS = { input: 2000, output: 400, cache_read: 10000, cache_write: 600, total: 13000 };
const TWO_CALLS_TEXT = "in 2.0k · out 400 · cache read 10.0k · cache write 600 · total 13.0k";

const golden = (name: string) => new URL(`../../../test/golden/${name}`, import.meta.url);
function matchGolden(name: string, actual: string): void {
  if (process.env.UPDATE_GOLDEN === "1") writeFileSync(golden(name), actual);
  assert.equal(actual, readFileSync(golden(name), "utf8"));
}

/** Every view's tokens of run `id` in `project`: status --json, list --json, report --format json, the dashboard's row. */
async function views(
  project: string,
  id: string,
  env: NodeJS.ProcessEnv,
): Promise<Record<string, { tokens: unknown; cost_usd: unknown }>> {
  const json = async (args: string[]) => {
    const result = await runRalph(args, project, env);
    assert.equal(result.code, 0, result.stderr);
    return JSON.parse(result.stdout) as Record<string, unknown>;
  };
  const status = await json(["status", id, "--json"]);
  const list =
    ((await json(["list", "--json"])).runs as Array<Record<string, unknown>>).find((run) => run.id === id) ?? {};
  const report = await json(["report", id, "--format", "json"]);
  const saved = process.env.XDG_STATE_HOME;
  process.env.XDG_STATE_HOME = env.XDG_STATE_HOME;
  try {
    const row = readRunRow({ key: "p", dir: project, name: "p" }, id, () => false, new Date());
    return {
      status: { tokens: status.tokens, cost_usd: status.cost_usd },
      list: { tokens: list.tokens, cost_usd: list.cost_usd },
      report: { tokens: report.tokens, cost_usd: report.cost_usd },
      dashboard: { tokens: row.tokens, cost_usd: row.cost_usd },
    };
  } finally {
    process.env.XDG_STATE_HOME = saved;
  }
}

describe("spend reads the same everywhere", { timeout: 150_000 }, () => {
  test("run mode with the real Claude Code: the closing line, status, list, report and the dashboard agree", async () => {
    const c = await lab.newCase(() => [textTurn("one", { usage: USAGE }), textTurn("two", { usage: USAGE })]);
    c.env.XDG_STATE_HOME = state;
    const result = await lab.runRalph(c, ["-n", "2", "--stall-limit", "0", "Do the work."]);
    assert.equal(result.code, 3, result.stderr + result.stdout);
    assert.match(
      result.stdout,
      new RegExp(`2 iterations, \\$[0-9.]+, tokens ${TWO_CALLS_TEXT.replace(/\./g, "\\.")}, exit code 3`),
    );
    const seen = await views(c.projectDir, c.runId, { ...cleanEnv(), XDG_STATE_HOME: state });
    const cost = seen.status?.cost_usd;
    assert.equal(typeof cost, "number", "Claude Code reports its cost");
    for (const [view, figures] of Object.entries(seen))
      assert.deepEqual(figures, { tokens: TWO_CALLS, cost_usd: cost }, view);
    const status = await runRalph(["status", c.runId], c.projectDir, { ...cleanEnv(), XDG_STATE_HOME: state });
    assert.match(status.stdout, new RegExp(`^tokens     ${TWO_CALLS_TEXT.replace(/\./g, "\\.")}$`, "m"));
  });

  test("hook mode with the real Claude Code: the same tokens; no cost reported, never $0.0000", async () => {
    const base = join(root, "hook");
    const dirs = { home: join(base, "home"), tmp: join(base, "tmp") };
    const project = join(base, "project");
    for (const dir of [dirs.home, dirs.tmp, join(project, ".claude")]) mkdirSync(dir, { recursive: true });
    writeFileSync(join(project, ".claude", "settings.json"), JSON.stringify({ model: "claude-fake" }));
    const fake = await startFakeAnthropic([textTurn("one", { usage: USAGE }), textTurn("two", { usage: USAGE })], {
      whenEmpty: textTurn("more", { usage: USAGE }),
    });
    servers.push(fake);
    const ralphEnv = {
      ...Object.fromEntries(Object.entries(cleanEnv()).filter(([name]) => !name.startsWith("CLAUDE"))),
      XDG_STATE_HOME: state,
    };
    const started = await runRalph(["hook", "start", "Do the work.", "--max-iterations", "2"], project, ralphEnv);
    assert.equal(started.code, 0, started.stderr);
    const child = spawn(
      PINNED_CLAUDE_BIN,
      ["-p", "--output-format", "stream-json", "--verbose", "--dangerously-skip-permissions", "Do the work."],
      {
        cwd: project,
        env: { ...fakeClaudeEnvironment(fake.url, dirs), XDG_STATE_HOME: state },
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    children.push(child);
    const code = await new Promise<number | null>((resolve) => {
      const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
      child.on("close", (exit) => {
        clearTimeout(timer);
        resolve(exit);
      });
    });
    assert.equal(code, 0);
    const list = JSON.parse((await runRalph(["list", "--json"], project, ralphEnv)).stdout) as {
      runs: Array<{ id: string }>;
    };
    const id = list.runs[0]?.id ?? "";
    const seen = await views(project, id, ralphEnv);
    for (const [view, figures] of Object.entries(seen))
      assert.deepEqual(figures, { tokens: TWO_CALLS, cost_usd: null }, view);
    const status = await runRalph(["status", id], project, ralphEnv);
    assert.match(status.stdout, /^spend {6}no cost reported$/m);
    assert.match(status.stdout, new RegExp(`^tokens     ${TWO_CALLS_TEXT.replace(/\./g, "\\.")}$`, "m"));
    const listed = await runRalph(["list"], project, ralphEnv);
    const report = await runRalph(["report", id], project, ralphEnv);
    for (const text of [status.stdout, listed.stdout, report.stdout]) assert.doesNotMatch(text, /\$0\.0000/);
    assert.match(listed.stdout, /no cost reported {2}2\.0k\/400\/10\.0k\/600, 13\.0k/);
  });

  test("a command agent that reports nothing: no cost reported in the closing line, list, status and report", async () => {
    const project = join(root, "command");
    mkdirSync(project, { recursive: true });
    const env = { ...cleanEnv(), XDG_STATE_HOME: state };
    const run = await runRalph(["run", "-n", "1", "--name", "quiet", "work", "--", "/bin/echo", "done"], project, env);
    assert.equal(run.code, 3, run.stderr);
    assert.match(
      run.stdout,
      /1 iteration, no cost reported, tokens in 0 · out 0 · cache read 0 · cache write 0 · total 0, exit code 3/,
    );
    for (const args of [["list"], ["status", "quiet"], ["report", "quiet"]]) {
      const shown = await runRalph(args, project, env);
      assert.doesNotMatch(shown.stdout, /\$0\.0000/, args.join(" "));
      assert.match(shown.stdout, /no cost reported/, args.join(" "));
    }
  });

  test("ralph spend over the ledger these runs and a demo run made: the golden files", async () => {
    const project = join(root, "demo");
    mkdirSync(project, { recursive: true });
    const env = { ...cleanEnv(), XDG_STATE_HOME: state };
    const demo = await runRalph(
      ["run", "--agent", "demo", "-n", "2", "--stall-limit", "0", "--name", "demo", "work"],
      project,
      env,
    );
    assert.equal(demo.code, 3, demo.stderr);
    const spend = async (args: string[]) => {
      const result = await runRalph(["spend", ...args], project, env);
      assert.equal(result.code, 0, result.stderr);
      return result.stdout;
    };
    // Dates, run ids of the lab and paths differ from run to run: they are replaced by names.
    const stable = (text: string) =>
      text
        .replaceAll(root, "ROOT")
        .replace(/"(since|until)":"[^"]+"/g, '"$1":"TIME"')
        .replace(/since \S+ \(from [^)]+\)/, "since TIME (from LEDGER)")
        .replace(/\d{4}-\d{2}-\d{2}/g, "DAY")
        .replace(/claude-e2e-\d+-\d+/g, "CLAUDE-RUN")
        .replace(/"key":"(ROOT\/[^"]+|hook-\d{8}-\d{6}-\w+|\d{8}-\d{6}-\w+)"/g, '"key":"HOOK-RUN"')
        .replace(/\b\d{8}-\d{6}-\w{4}\b/g, "HOOK-RUN");
    matchGolden("spend-by-agent.json", `${stable(await spend(["--all-projects", "--by", "agent", "--json"]))}`);
    matchGolden("spend-by-model.txt", stable(await spend(["--all-projects", "--by", "model"])));
    matchGolden("spend-demo-by-day.txt", stable(await spend(["--by", "day"])));
    // The dashboard's chart reads the same sums.
    const saved = process.env.XDG_STATE_HOME;
    process.env.XDG_STATE_HOME = state;
    try {
      const chart = spendChartData([{ key: "d", dir: project, name: "demo" }], "day", 14, process.env);
      assert.deepEqual(
        chart.groups.map((group) => [group.cost_text, group.tokens_text]),
        [["$0.0246", "in 2.4k · out 680 · cache read 0 · cache write 0 · total 3.1k"]],
      );
    } finally {
      process.env.XDG_STATE_HOME = saved;
    }
  });
});
