// A `type: review` criterion whose reviewer is the real pinned Claude Code CLI, driven by the fake Anthropic
// API: it gets the review prompt (task and diff) on stdin, its verdict ends the run, and its spend is counted.
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { textTurn } from "../fixtures/fake-anthropic.js";
import { RalphClaudeLab } from "../fixtures/ralph-claude-lab.js";
import { finishWithin, readEvents, readStatus, runRalph, startRalph } from "../helpers/cli.js";

const lab = new RalphClaudeLab();
after(() => lab.cleanup());
// Claude Code prices the fake's default usage (100 in, 20 out per call) at $0.001 a call.
const COST_PER_CALL = 0.001;

describe("a Claude Code reviewer", { timeout: 120_000 }, () => {
  test("changes, then approve: the findings reach the agent, the run ends DONE, both reviews are paid for", async () => {
    const c = await lab.newCase(() => [
      textTurn("FINDING: work.txt is missing its second line.\n<verdict>changes</verdict>"),
      textTurn("Both lines are there.\n<verdict>approve</verdict>"),
    ]);
    // A spend ledger of the case's own: its calls are this run's only.
    const state = mkdtempSync(join(tmpdir(), "ralph-review-spend-"));
    c.env.XDG_STATE_HOME = state;
    const git = (...args: string[]) =>
      execFileSync("git", ["-c", "user.name=T", "-c", "user.email=t@example.test", ...args], {
        cwd: c.projectDir,
        env: c.env,
        stdio: "ignore",
      });
    git("init", "-q", "-b", "main");
    writeFileSync(join(c.projectDir, ".gitignore"), ".ralph/\n");
    writeFileSync(
      join(c.projectDir, "ralph.yaml"),
      "completion_criteria:\n  - type: review\n    agent: claude\n    prompt: Check work.txt line by line.\n",
    );
    git("add", "-A");
    git("commit", "-q", "-m", "first");
    const prompts = join(c.projectDir, "..", "prompts");
    const worker = [
      "--",
      "sh",
      "-c",
      `cat >> '${prompts}'; printf '\\0' >> '${prompts}'; echo "line $RALPH_ITERATION" >> work.txt; echo '<promise>DONE</promise>'`,
    ];
    const result = await finishWithin(
      startRalph(
        ["run", "--name", c.runId, "-n", "3", "--completion-promise", "DONE", "fill work.txt", ...worker],
        c.projectDir,
        c.env,
      ),
      60_000,
    );
    assert.equal(result.code, 0, result.stdout + result.stderr);
    const reviews = readEvents(c.runDir).filter((event) => event.type === "review_verdict");
    assert.deepEqual(
      reviews.map((event) => [event.iteration, event.agent, event.verdict]),
      [
        [1, "claude", "changes"],
        [2, "claude", "approve"],
      ],
    );
    // The reviewer read the task, the diff and the person's instructions on stdin.
    const asked = c.fake.mainRequests().map((request) => request.lastMessageText);
    assert.match(asked[0] ?? "", /fill work\.txt[\s\S]*\+line 1[\s\S]*Check work\.txt line by line\./);
    assert.match(asked[1] ?? "", /\+line 2/);
    assert.match(readFileSync(prompts, "utf8").split("\0")[1] ?? "", /FINDING: work\.txt is missing its second line\./);
    const status = readStatus(c.runDir);
    assert.equal(status.exit_reason, "DONE");
    assert.ok(Math.abs(Number(status.cost_usd) - 2 * COST_PER_CALL) < 1e-9, String(status.cost_usd));
    assert.deepEqual(status.tokens, { input: 200, output: 40, cacheRead: 0, cacheWrite: 0 });
    // Each review is a call of the spend ledger, with the reviewer's cost and tokens: what every view counts.
    const days = join(state, "ralph", "spend", "days");
    const calls = readdirSync(days).flatMap((day) =>
      readFileSync(join(days, day), "utf8")
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line) as Record<string, unknown>),
    );
    const reviewCalls = calls.filter((call) => call.role === "review");
    assert.deepEqual(
      reviewCalls.map((call) => [call.run, call.iteration, call.agent, call.cost_source]),
      [
        [c.runId, 1, "claude", "reported"],
        [c.runId, 2, "claude", "reported"],
      ],
    );
    for (const call of reviewCalls)
      assert.deepEqual(call.tokens, { input: 100, output: 20, cache_read: 0, cache_write: 0 });
    const shown = JSON.parse((await runRalph(["status", c.runId, "--json"], c.projectDir, c.env)).stdout) as {
      cost_usd: number;
      tokens: { total: number };
    };
    assert.ok(Math.abs(shown.cost_usd - 2 * COST_PER_CALL) < 1e-9, String(shown.cost_usd));
    assert.equal(shown.tokens.total, 240);
  });
});
