// The `type: review` criterion (SPEC section 16) through the built CLI, in real git repositories: a reviewer
// (the command agent running a fixture) judges the iteration once the promise is claimed; only its
// <verdict>approve</verdict> at the end of its answer ends the run DONE, its findings reach the next prompt,
// and it judges the whole run's diff. The reviewer as a process (its answers, timeout, spend, writes, the
// sandbox) is in review-reviewer.test.ts: one file took longer than a test file may under load.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { spawnSync } from "node:child_process";
import { RALPH, readEvents, readStatus, runRalph } from "../helpers/cli.js";
import { git } from "../helpers/git-repo.js";
import { REVIEWER_REWRITING_AGENT, scriptReviewerRepo } from "../fixtures/script-reviewer.js";
import { gitEnv, outside, reviewRepo, reviews, runDir, worker } from "../fixtures/review-repo.js";
import { updateLedgerEntry } from "../../src/control/run-ledger.js";
import { snapshotTree } from "../../src/worktree/tree-snapshot.js";

/** An agent that ticks the first open task of TASKS.md and notes its iteration's work in work.txt. */
const TICK_ONE_TASK = [
  "--",
  "sh",
  "-c",
  `cat > /dev/null; sed -i '0,/- \\[ \\]/s//- [x]/' TASKS.md; echo "work of iteration $RALPH_ITERATION" >> work.txt; echo ticked`,
];

describe("type: review", () => {
  test("changes once, then approve: DONE in iteration 2, and the first findings are in iteration 2's prompt", async () => {
    const state = outside();
    const repo = reviewRepo("changes,approve", state);
    const prompts = join(state, "prompts");
    const result = await runRalph(
      ["run", "--name", "r", "-n", "4", "--completion-promise", "DONE", "write the work file", ...worker(prompts)],
      repo,
      gitEnv(),
    );
    assert.equal(result.code, 0, result.stdout + result.stderr);
    assert.equal(readStatus(runDir(repo)).exit_reason, "DONE");
    assert.deepEqual(
      reviews(repo).map((event) => [event.iteration, event.verdict]),
      [
        [1, "changes"],
        [2, "approve"],
      ],
    );
    const [first, second] = readFileSync(prompts, "utf8").split("\u0000");
    assert.doesNotMatch(first ?? "", /FINDING-1/);
    assert.match(
      second ?? "",
      /## Review of your last iteration[\s\S]*asked for changes[\s\S]*FINDING-1: work\.txt needs a usage section/,
    );
    // The reviewer got the task and the run's diff, on stdin: nothing is approved yet, so iteration 1's line too.
    const asked = readFileSync(join(state, "review-2.txt"), "utf8");
    assert.match(asked, /write the work file/);
    assert.match(asked, /^\+line 1\n\+line 2$/m);
    assert.match(asked, /read-only/);
    // status, ralph status and the terminal say so.
    assert.deepEqual(readStatus(runDir(repo)).review, {
      iteration: 2,
      verdict: "approve",
      detail: "Review 2: the change does what the task asks.",
    });
    const status = spawnSync(process.execPath, [RALPH, "status", "r"], { cwd: repo, env: gitEnv(), encoding: "utf8" });
    assert.match(status.stdout, /^review +iteration 2: approve/m);
    assert.match(
      result.stdout,
      /review asks for changes: fixture reviewer \(FINDING-1: work\.txt needs a usage section\.\)/,
    );
    assert.match(result.stdout, /review approved: fixture reviewer/);
    const logs = spawnSync(process.execPath, [RALPH, "logs", "r"], { cwd: repo, env: gitEnv(), encoding: "utf8" });
    assert.match(logs.stdout, /review asks for changes: fixture reviewer/);
  });

  test("with a task list: the last task ticked but the review asks for changes: not NO_WORK; an iteration without a task gets the findings", async () => {
    const state = outside();
    const repo = reviewRepo("changes,approve", state);
    writeFileSync(join(repo, "TASKS.md"), "- [ ] Add the work file\n");
    const prompts = join(state, "prompts");
    const tick = [
      "--",
      "sh",
      "-c",
      `cat >> '${prompts}'; printf '\\0' >> '${prompts}'; sed -i 's/- \\[ \\]/- [x]/' TASKS.md; echo "line $RALPH_ITERATION" >> work.txt; echo ticked`,
    ];
    const result = await runRalph(
      ["run", "--name", "r", "-n", "3", "--tasks", "TASKS.md", "work", ...tick],
      repo,
      gitEnv(),
    );
    assert.equal(result.code, 0, result.stdout + result.stderr);
    assert.equal(readStatus(runDir(repo)).exit_reason, "DONE");
    const started = readEvents(runDir(repo)).filter((event) => event.type === "iteration_started");
    assert.deepEqual(
      started.map((event) => event.task === null),
      [false, true],
    );
    assert.match(readFileSync(prompts, "utf8").split("\u0000")[1] ?? "", /FINDING-1/);
  });

  test("with a task list, the one review after the last task gets every task's change, not only the last iteration's", async () => {
    const state = outside();
    const repo = reviewRepo("approve", state);
    writeFileSync(join(repo, "TASKS.md"), "- [ ] First task\n- [ ] Second task\n");
    // One task a iteration, no promise: the review runs once, after iteration 2 ticks the last task.
    const result = await runRalph(
      ["run", "--name", "r", "-n", "3", "--tasks", "TASKS.md", "work", ...TICK_ONE_TASK],
      repo,
      gitEnv(),
    );
    assert.equal(result.code, 0, result.stdout + result.stderr);
    assert.deepEqual(
      reviews(repo).map((event) => [event.iteration, event.verdict]),
      [[2, "approve"]],
    );
    const asked = readFileSync(join(state, "review-1.txt"), "utf8");
    assert.match(asked, /^\+work of iteration 1$/m, "the first task's work reached the reviewer as a change");
    assert.match(asked, /^\+work of iteration 2$/m);
    assert.match(asked, /^\+- \[x\] First task$/m);
  });

  test("ralph continue: the review's diff still starts where the run first started, so the first part's work is in it", async () => {
    const state = outside();
    const repo = reviewRepo("approve", state);
    writeFileSync(join(repo, "TASKS.md"), "- [ ] First task\n- [ ] Second task\n");
    const first = await runRalph(
      ["run", "--name", "r", "-n", "1", "--tasks", "TASKS.md", "work", ...TICK_ONE_TASK],
      repo,
      gitEnv(),
    );
    assert.equal(first.code, 3, first.stdout + first.stderr);
    assert.deepEqual(reviews(repo), [], "a task is open: no review yet");
    const continued = await runRalph(["continue", "r", "-n", "2"], repo, gitEnv());
    assert.equal(continued.code, 0, continued.stdout + continued.stderr);
    assert.equal(readStatus(runDir(repo)).exit_reason, "DONE");
    const asked = readFileSync(join(state, "review-1.txt"), "utf8");
    assert.match(asked, /^\+work of iteration 1$/m, "the first part's work reached the reviewer as a change");
    assert.match(asked, /^\+work of iteration 2$/m);
  });

  test("ralph continue after a crash: a review base written into status.json by the agent is not taken, the first part's work is still reviewed", async () => {
    const state = outside();
    const repo = reviewRepo("approve", state);
    writeFileSync(join(repo, "TASKS.md"), "- [ ] First task\n- [ ] Second task\n");
    const first = await runRalph(
      ["run", "--name", "r", "-n", "1", "--tasks", "TASKS.md", "work", ...TICK_ONE_TASK],
      repo,
      gitEnv(),
    );
    assert.equal(first.code, 3, first.stdout + first.stderr);
    // As after a runner killed mid-run: no digest of its last status.json. An unsandboxed agent then moves the
    // review base to the tree as it left it, so its first part's work would never be in a diff.
    updateLedgerEntry(runDir(repo), { status_sha256: null });
    const now = await snapshotTree(repo, gitEnv());
    assert.ok(now.ok);
    const status = JSON.parse(readFileSync(join(runDir(repo), "status.json"), "utf8")) as Record<string, unknown>;
    writeFileSync(join(runDir(repo), "status.json"), JSON.stringify({ ...status, review_base: now.tree }));
    const continued = await runRalph(["continue", "r", "-n", "2"], repo, gitEnv());
    assert.equal(continued.code, 0, continued.stdout + continued.stderr);
    const asked = readFileSync(join(state, "review-1.txt"), "utf8");
    assert.match(asked, /^\+work of iteration 1$/m, "the first part's work reached the reviewer as a change");
  });

  for (const flag of ["--skip-worktree", "--assume-unchanged"]) {
    test(`a change to a file the agent flagged ${flag} in the repository's index is in the reviewer's diff`, async () => {
      const state = outside();
      const repo = reviewRepo("approve", state);
      writeFileSync(join(repo, "app.txt"), "benign\n");
      git(repo, "add", "app.txt");
      git(repo, "commit", "-q", "-m", "app");
      const hide = [
        "--",
        "sh",
        "-c",
        `cat > /dev/null; git update-index ${flag} app.txt; echo 'HIDDEN CHANGE' >> app.txt; echo seen > notes.txt; echo '<promise>DONE</promise>'`,
      ];
      const result = await runRalph(
        ["run", "--name", "r", "-n", "1", "--completion-promise", "DONE", "work", ...hide],
        repo,
        gitEnv(),
      );
      assert.equal(result.code, 0, result.stdout + result.stderr);
      const asked = readFileSync(join(state, "review-1.txt"), "utf8");
      assert.match(asked, /^\+seen$/m);
      assert.match(asked, /^\+HIDDEN CHANGE$/m, "the flagged file's change reached the reviewer");
    });
  }

  test("an agent that breaks the repository (.git/HEAD) so no diff can be taken gets no review that counts: the reviewer is not run", async () => {
    const state = outside();
    const repo = reviewRepo("approve", state);
    const breakGit = [
      "--",
      "sh",
      "-c",
      `cat > /dev/null; echo 'HIDDEN CHANGE' > app.txt; echo garbage > .git/HEAD; echo '<promise>DONE</promise>'`,
    ];
    const result = await runRalph(
      ["run", "--name", "r", "-n", "1", "--completion-promise", "DONE", "work", ...breakGit],
      repo,
      gitEnv(),
    );
    assert.equal(result.code, 3, result.stdout + result.stderr);
    assert.equal(readStatus(runDir(repo)).exit_reason, "MAX_ITERATIONS");
    const [review] = reviews(repo);
    assert.equal(review?.verdict, "none");
    assert.match(String(review?.reason), /not run: the run's changes cannot be seen \(no git snapshot/);
    assert.equal(existsSync(join(state, "review-1.txt")), false, "no reviewer was started");
    assert.equal(readStatus(runDir(repo)).calls, 1, "the reviewer not started is no agent call");
  });

  for (const [name, flags, end] of [
    ["every task ticked by an iteration that failed: not NO_WORK", [], "exit 1"],
    ["the --task ticked by an iteration that failed: not DONE", ["--task", "1"], "exit 1"],
    [
      "every task ticked without the promise, so no review ran: not NO_WORK",
      ["--completion-promise", "DONE"],
      "echo ticked",
    ],
  ] as const) {
    test(`no review saw the work: ${name}`, async () => {
      const state = outside();
      const repo = reviewRepo("approve", state);
      writeFileSync(join(repo, "TASKS.md"), "- [ ] First task\n- [ ] Second task\n");
      const tick = [
        "--",
        "sh",
        "-c",
        `cat > /dev/null; sed -i 's/- \\[ \\]/- [x]/' TASKS.md; echo work >> work.txt; ${end}`,
      ];
      const result = await runRalph(
        ["run", "--name", "r", "-n", "2", "--tasks", "TASKS.md", ...flags, "work", ...tick],
        repo,
        gitEnv(),
      );
      assert.equal(result.code, 3, result.stdout + result.stderr);
      assert.equal(readStatus(runDir(repo)).exit_reason, "MAX_ITERATIONS");
      assert.deepEqual(reviews(repo), []);
    });
  }

  test("after an iteration that ticked every task and failed, the next one's claim is reviewed, the failed one's work in the diff", async () => {
    const state = outside();
    const repo = reviewRepo("approve", state);
    writeFileSync(join(repo, "TASKS.md"), "- [ ] First task\n");
    const work = [
      "--",
      "sh",
      "-c",
      `cat > /dev/null; sed -i 's/- \\[ \\]/- [x]/' TASKS.md; echo "work of iteration $RALPH_ITERATION" >> work.txt; [ "$RALPH_ITERATION" = 1 ] && exit 1; echo '<promise>DONE</promise>'`,
    ];
    const result = await runRalph(
      ["run", "--name", "r", "-n", "3", "--tasks", "TASKS.md", "--completion-promise", "DONE", "work", ...work],
      repo,
      gitEnv(),
    );
    assert.equal(result.code, 0, result.stdout + result.stderr);
    assert.equal(readStatus(runDir(repo)).exit_reason, "DONE");
    assert.deepEqual(
      reviews(repo).map((event) => [event.iteration, event.verdict]),
      [[2, "approve"]],
    );
    assert.match(readFileSync(join(state, "review-1.txt"), "utf8"), /^\+work of iteration 1$/m);
  });

  test("with --task: the task marked done while the review asks for changes does not end the run DONE", async () => {
    const state = outside();
    const repo = reviewRepo("changes,approve", state);
    writeFileSync(
      join(repo, "prd.json"),
      `${JSON.stringify(
        {
          userStories: [
            { id: "US-1", title: "work file", passes: false },
            { id: "US-2", title: "other", passes: false },
          ],
        },
        null,
        2,
      )}\n`,
    );
    const mark = [
      "--",
      "sh",
      "-c",
      `cat > /dev/null; sed -i '0,/"passes": false/s//"passes": true/' prd.json; echo "line $RALPH_ITERATION" >> work.txt; echo marked`,
    ];
    const result = await runRalph(
      ["run", "--name", "r", "-n", "3", "--tasks", "prd.json", "--task", "US-1", "work", ...mark],
      repo,
      gitEnv(),
    );
    assert.equal(result.code, 0, result.stdout + result.stderr);
    assert.equal(readStatus(runDir(repo)).exit_reason, "DONE");
    assert.deepEqual(
      reviews(repo).map((event) => [event.iteration, event.verdict]),
      [
        [1, "changes"],
        [2, "approve"],
      ],
    );
  });

  test("a reviewer script in the work tree that the agent rewrites to approve is not run: no verdict, the run never ends DONE", async () => {
    const repo = scriptReviewerRepo();
    // The agent rewrites the reviewer to approve, changes a file and claims the promise.
    const result = await runRalph(
      ["run", "--name", "r", "-n", "2", "--completion-promise", "DONE", "work", ...REVIEWER_REWRITING_AGENT],
      repo,
      gitEnv(),
    );
    assert.equal(result.code, 3, result.stdout + result.stderr);
    assert.match(readFileSync(join(repo, "review.sh"), "utf8"), /approve/, "the agent did rewrite it");
    const verdicts = reviews(repo);
    assert.deepEqual(
      verdicts.map((event) => event.verdict),
      ["none", "none"],
    );
    assert.match(
      String(verdicts[0]?.reason),
      /^not run: the reviewer's script .*\/review\.sh changed since the run started; ralph runs only the script as it was then$/,
    );
    // Control: the rewritten script, run as ralph ran it before, approves.
    assert.match(
      spawnSync("sh", ["review.sh"], { cwd: repo, input: "", encoding: "utf8" }).stdout,
      /<verdict>approve<\/verdict>/,
    );
  });

  test("a diff too large to show whole is no approval: the reviewer's approve gives no verdict (a small diff's approve ends DONE)", async () => {
    const state = outside();
    const repo = reviewRepo("approve,approve", state);
    const agent = [
      "--",
      "sh",
      "-c",
      `cat > /dev/null; head -c 300000 /dev/zero | tr '\\0' 'x' | fold -w 100 > big.txt; echo '<promise>DONE</promise>'`,
    ];
    const result = await runRalph(
      ["run", "--name", "r", "-n", "1", "--completion-promise", "DONE", "work", ...agent],
      repo,
      gitEnv(),
    );
    assert.equal(result.code, 3, result.stdout + result.stderr);
    const [verdict] = reviews(repo);
    assert.equal(verdict?.verdict, "none");
    assert.equal(
      verdict?.reason,
      "the run's diff is too large to show whole (over 200 KiB); an approval of part of it does not count",
    );
    // Control: the same reviewer approving a small change ends the run DONE.
    const small = reviewRepo("approve", outside());
    const done = await runRalph(
      [
        "run",
        "--name",
        "r",
        "-n",
        "1",
        "--completion-promise",
        "DONE",
        "work",
        "--",
        "sh",
        "-c",
        "cat > /dev/null; echo x > small.txt; echo '<promise>DONE</promise>'",
      ],
      small,
      gitEnv(),
    );
    assert.equal(done.code, 0, done.stdout + done.stderr);
  });

  test("control: a reviewer that always asks for changes never lets the run end DONE", async () => {
    const state = outside();
    const repo = reviewRepo("changes", state);
    const result = await runRalph(
      ["run", "--name", "r", "-n", "2", "--completion-promise", "DONE", "work", ...worker(join(state, "prompts"))],
      repo,
      gitEnv(),
    );
    assert.equal(result.code, 3, result.stdout + result.stderr);
    assert.equal(readStatus(runDir(repo)).exit_reason, "MAX_ITERATIONS");
    assert.deepEqual(
      reviews(repo).map((event) => event.verdict),
      ["changes", "changes"],
    );
    assert.equal((readStatus(runDir(repo)).review as { verdict: string }).verdict, "changes");
  });
});
