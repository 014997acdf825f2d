// The reviewer of a `type: review` criterion as a process, through the built CLI: an answer that is no verdict,
// a crash, a timeout and Ctrl-C end in no approval; a write in the tree voids its verdict (and fails in a
// sandbox); its spend counts toward --max-cost; a bad criterion is a usage error. (The verdicts and the diff
// it judges: review.test.ts.)
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { spawnSync } from "node:child_process";
import {
  cleanEnv,
  fakeClaudeEnv,
  finishWithin,
  processAlive,
  RALPH,
  readEvents,
  readStatus,
  runRalph,
  startRalph,
} from "../helpers/cli.js";
import { waitForFile } from "../helpers/wait.js";
import { tempRepo } from "../helpers/git-repo.js";
import { gitEnv, outside, REVIEWER, reviewRepo, reviews, runDir, worker } from "../fixtures/review-repo.js";

describe("type: review, the reviewer as a process", () => {
  for (const [answer, reason] of [
    ["quoted", /no <verdict> tag|not at the end/],
    ["crash", /the reviewer failed: exit 1/],
  ] as const) {
    test(`a reviewer whose answer is "${answer}" is no approval`, async () => {
      const state = outside();
      const repo = reviewRepo(answer, state);
      const result = await runRalph(
        ["run", "--name", "r", "-n", "1", "--completion-promise", "DONE", "work", ...worker(join(state, "prompts"))],
        repo,
        gitEnv(),
      );
      assert.equal(result.code, 3, result.stdout + result.stderr);
      const [review] = reviews(repo);
      assert.equal(review?.verdict, "none");
      assert.match(String(review?.reason), reason);
      assert.match(result.stdout, /review not approved: fixture reviewer gave no verdict that counts/);
    });
  }

  test("a reviewer past its timeout is ended with its tree, and that is no approval", async () => {
    const state = outside();
    const repo = reviewRepo("hang", state, "    timeout: 3s\n");
    const result = await runRalph(
      ["run", "--name", "r", "-n", "1", "--completion-promise", "DONE", "work", ...worker(join(state, "prompts"))],
      repo,
      gitEnv(),
    );
    assert.equal(result.code, 3, result.stdout + result.stderr);
    const [review] = reviews(repo);
    assert.equal(review?.verdict, "none");
    assert.match(String(review?.reason), /the reviewer failed: timed out/);
    assert.equal(
      processAlive(Number(readFileSync(join(state, "hang.pid"), "utf8"))),
      false,
      "the hung reviewer was ended",
    );
  });

  test("Ctrl-C while the reviewer runs ends it and the run (INTERRUPTED), the iteration recorded unjudged", async () => {
    const state = outside();
    const repo = reviewRepo("hang", state);
    const started = startRalph(
      ["run", "--name", "r", "-n", "2", "--completion-promise", "DONE", "work", ...worker(join(state, "prompts"))],
      repo,
      gitEnv(),
    );
    await waitForFile(join(state, "hang.pid"));
    started.child.kill("SIGINT");
    const result = await finishWithin(started, 20_000);
    assert.equal(result.signal, "SIGINT", result.stdout + result.stderr);
    assert.equal(readStatus(runDir(repo)).exit_reason, "INTERRUPTED");
    assert.equal(processAlive(Number(readFileSync(join(state, "hang.pid"), "utf8"))), false, "the reviewer was ended");
    assert.deepEqual(
      readEvents(runDir(repo))
        .filter((event) => event.type === "iteration_ended")
        .map((event) => event.result),
      ["interrupted"],
    );
  });

  test("outside a sandbox, a reviewer that writes in the tree gives no verdict that counts, and the run says so", async () => {
    const state = outside();
    const repo = reviewRepo("write", state);
    const result = await runRalph(
      ["run", "--name", "r", "-n", "1", "--completion-promise", "DONE", "work", ...worker(join(state, "prompts"))],
      repo,
      gitEnv(),
    );
    assert.equal(result.code, 3, result.stdout + result.stderr);
    assert.equal(
      existsSync(join(repo, "reviewer-was-here.txt")),
      true,
      "the write itself is not stopped outside a sandbox",
    );
    const [review] = reviews(repo);
    assert.equal(review?.verdict, "none");
    assert.match(
      String(review?.reason),
      /the reviewer changed the work tree \(working tree changed: reviewer-was-here\.txt\)/,
    );
  });

  test("without git: the reviewer is told there is no diff, and the run says once that a change by it cannot be seen", async () => {
    const state = outside();
    const dir = outside();
    const command = [process.execPath, REVIEWER, "--answers", "changes,approve", "--state", state];
    writeFileSync(
      join(dir, "ralph.yaml"),
      `completion_criteria:\n  - type: review\n    agent: command\n    command: ${JSON.stringify(command)}\n`,
    );
    const result = await runRalph(
      ["run", "--name", "r", "-n", "2", "--completion-promise", "DONE", "work", ...worker(join(state, "prompts"))],
      dir,
      cleanEnv(),
    );
    assert.equal(result.code, 0, result.stdout + result.stderr);
    assert.match(
      readFileSync(join(state, "review-1.txt"), "utf8"),
      /\(no diff: no git snapshot of .*not a git repository/,
    );
    const log = readFileSync(join(dir, ".ralph", "runs", "r", "run.log"), "utf8");
    assert.equal((log.match(/ralph cannot see whether a reviewer changes the work tree here/g) ?? []).length, 1, log);
  });

  test("the reviewer's spend counts toward --max-cost and the run's cost", async () => {
    const state = outside();
    const repo = tempRepo();
    // The reviewer is Claude Code (a fake printing stream-json, $0.01 a call, no verdict); the worker reports no cost.
    writeFileSync(
      join(repo, "ralph.yaml"),
      "completion_criteria:\n  - type: review\n    agent: claude\n    model: reviewer-model\n",
    );
    const env = {
      ...fakeClaudeEnv(state),
      GIT_CONFIG_GLOBAL: process.env.GIT_CONFIG_GLOBAL ?? "",
      GIT_CONFIG_NOSYSTEM: "1",
    };
    const result = await runRalph(
      [
        "run",
        "--name",
        "r",
        "-n",
        "5",
        "--max-cost",
        "0.015",
        "--completion-promise",
        "DONE",
        "work",
        ...worker(join(state, "prompts")),
      ],
      repo,
      env,
    );
    assert.equal(result.code, 3, result.stdout + result.stderr);
    const status = readStatus(runDir(repo));
    assert.equal(status.exit_reason, "BUDGET_EXCEEDED");
    assert.equal(status.iteration, 2);
    assert.ok(Math.abs(Number(status.cost_usd) - 0.02) < 1e-9, String(status.cost_usd));
    assert.deepEqual(
      reviews(repo).map((event) => event.cost_usd),
      [0.01, 0.01],
    );
  });

  test("a reviewer is not started once the agent's iteration spent the budget", async () => {
    const state = outside();
    const repo = tempRepo();
    writeFileSync(join(repo, "ralph.yaml"), "completion_criteria:\n  - type: review\n    agent: claude\n");
    // Agent and reviewer are the fake Claude Code ($0.01 a call); the agent claims the promise.
    const env = {
      ...fakeClaudeEnv(state, "--promise", "DONE"),
      GIT_CONFIG_GLOBAL: process.env.GIT_CONFIG_GLOBAL ?? "",
      GIT_CONFIG_NOSYSTEM: "1",
    };
    const result = await runRalph(
      [
        "run",
        "--name",
        "r",
        "--agent",
        "claude",
        "-n",
        "3",
        "--max-cost",
        "0.005",
        "--completion-promise",
        "DONE",
        "work",
      ],
      repo,
      env,
    );
    assert.equal(result.code, 3, result.stdout + result.stderr);
    const status = readStatus(runDir(repo));
    assert.equal(status.exit_reason, "BUDGET_EXCEEDED");
    assert.equal(status.cost_usd, 0.01);
    assert.equal(status.calls, 1, "the reviewer not started is no agent call");
    const [review] = reviews(repo);
    assert.equal(review?.verdict, "none");
    assert.match(String(review?.reason), /not run: the budget \(--max-cost \$0\.005\) is spent/);
  });

  test("the demo agent reviews too, offline: --agent demo with a demo reviewer ends DONE, both spends counted", async () => {
    const repo = tempRepo();
    writeFileSync(join(repo, "TASKS.md"), "- [ ] Add a README section\n");
    writeFileSync(join(repo, "ralph.yaml"), "completion_criteria:\n  - type: review\n    agent: demo\n");
    const result = await runRalph(
      ["run", "--name", "r", "--agent", "demo", "-n", "2", "--tasks", "TASKS.md", "work"],
      repo,
      gitEnv({ RALPH_DEMO_DELAY_MS: "0" }),
    );
    assert.equal(result.code, 0, result.stdout + result.stderr);
    const [review] = reviews(repo);
    assert.equal(review?.verdict, "approve");
    assert.match(String(review?.findings), /read the iteration's diff \([1-9]\d* added lines?\)/);
    assert.ok(Math.abs(Number(readStatus(runDir(repo)).cost_usd) - (0.0123 + 0.0042)) < 1e-9);
  });

  test("a bad review criterion is one usage line, exit 2, and no run", async () => {
    for (const [yaml, message] of [
      [
        "  - type: review\n    agent: nobody\n",
        /completion criterion 1 \(review\) needs "agent": one of claude, codex, gemini, opencode, demo, command, got "nobody"/,
      ],
      ["  - type: review\n    agent: command\n", /with agent: command needs "command"/],
      ["  - type: review\n    agent: claude\n    timeout: soon\n", /"timeout": expected a duration/],
      ["  - type: review\n    agent: claude\n    reviewer: x\n", /unknown key "reviewer"/],
    ] as const) {
      const repo = tempRepo();
      writeFileSync(join(repo, "ralph.yaml"), `completion_criteria:\n${yaml}`);
      const result = await runRalph(["run", "--name", "r", "-n", "1", "work", "--", "true"], repo, gitEnv());
      assert.equal(result.code, 2, result.stdout + result.stderr);
      assert.match(result.stderr, message);
      assert.equal(result.stderr.trim().split("\n").length, 1, result.stderr);
      assert.equal(existsSync(join(repo, ".ralph", "runs", "r")), false);
    }
  });
});

/** Why a sandbox cannot be built here (from `ralph doctor --json`), or null. */
function sandboxMissing(): string | null {
  if (process.platform !== "linux") return "Linux only";
  const result = spawnSync(process.execPath, [RALPH, "doctor", "--json"], {
    env: cleanEnv(),
    encoding: "utf8",
    timeout: 60_000,
  });
  const sandbox = (JSON.parse(result.stdout) as { sandbox?: { ok: boolean; why?: string } }).sandbox;
  return sandbox?.ok ? null : `no sandbox here: ${sandbox?.why ?? "doctor says nothing"}`;
}

describe("type: review in a --sandbox run", { skip: sandboxMissing() ?? false }, () => {
  test("the reviewer runs in the sandbox with the tree read-only: its write fails, and its approval counts", async () => {
    const repo = reviewRepo("write", null);
    // The worker runs sandboxed too, so it records nothing outside the tree: it only writes work.txt.
    const work = [
      "--",
      "sh",
      "-c",
      `cat > /dev/null; echo "line $RALPH_ITERATION" >> work.txt; echo '<promise>DONE</promise>'`,
    ];
    const result = await runRalph(
      ["run", "--sandbox", "--name", "r", "-n", "1", "--completion-promise", "DONE", "work", ...work],
      repo,
      gitEnv(),
    );
    assert.equal(result.code, 0, result.stdout + result.stderr);
    assert.equal(existsSync(join(repo, "reviewer-was-here.txt")), false, "the sandboxed reviewer wrote in the tree");
    assert.equal(readFileSync(join(repo, "work.txt"), "utf8"), "line 1\n", "the sandboxed worker could write");
    const [review] = reviews(repo);
    assert.equal(review?.verdict, "approve");
    assert.match(String(review?.findings), /could not write: EROFS/);
  });
});
