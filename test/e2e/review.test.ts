// The `type: review` criterion (SPEC section 16) through the built CLI, in real git repositories: a reviewer
// (the command agent running a fixture) judges the iteration once the promise is claimed; only its
// <verdict>approve</verdict> at the end of its answer ends the run DONE, its findings reach the next prompt,
// its spend counts toward --max-cost, and it cannot change the tree.
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { spawnSync } from "node:child_process";
import { cleanEnv, fakeClaudeEnv, finishWithin, processAlive, RALPH, readEvents, readStatus, runRalph, startRalph } from "../helpers/cli.js";
import { waitForFile } from "../helpers/wait.js";
import { git, isolateGitConfig, tempRepo } from "../helpers/git-repo.js";
import { updateLedgerEntry } from "../../src/control/run-ledger.js";
import { snapshotTree } from "../../src/worktree/tree-snapshot.js";

after(isolateGitConfig());
const REVIEWER = fileURLToPath(new URL("../fixtures/review-agent.js", import.meta.url));
const scratch: string[] = [];
after(() => scratch.forEach((dir) => rmSync(dir, { recursive: true, force: true })));
/** A directory outside the repository for what the fixtures record. */
const outside = (): string => {
  const dir = mkdtempSync(join(tmpdir(), "ralph-review-state-"));
  scratch.push(dir);
  return dir;
};
const runDir = (repo: string): string => join(repo, ".ralph", "runs", "r");
const gitEnv = (extra: Record<string, string> = {}) => cleanEnv({ GIT_CONFIG_GLOBAL: process.env.GIT_CONFIG_GLOBAL ?? "", GIT_CONFIG_NOSYSTEM: "1", ...extra });

/** A repository whose ralph.yaml has one review criterion running the fixture reviewer with `answers`. */
function reviewRepo(answers: string, state: string | null, extra = ""): string {
  const repo = tempRepo();
  const command = [process.execPath, REVIEWER, "--answers", answers, ...(state ? ["--state", state] : [])];
  writeFileSync(join(repo, "ralph.yaml"), `completion_criteria:\n  - type: review\n    agent: command\n    check: fixture reviewer\n    command: ${JSON.stringify(command)}\n${extra}`);
  git(repo, "add", "ralph.yaml");
  git(repo, "commit", "-q", "-m", "review criterion");
  return repo;
}

/** A worker (the command agent) that records its prompt, changes work.txt and claims the promise. */
function worker(prompts: string): string[] {
  return ["--", "sh", "-c", `cat >> '${prompts}'; printf '\\0' >> '${prompts}'; echo "line $RALPH_ITERATION" >> work.txt; echo done; echo '<promise>DONE</promise>'`];
}

const reviews = (repo: string) => readEvents(runDir(repo)).filter((event) => event.type === "review_verdict");

/** An agent that ticks the first open task of TASKS.md and notes its iteration's work in work.txt. */
const TICK_ONE_TASK = ["--", "sh", "-c", `cat > /dev/null; sed -i '0,/- \\[ \\]/s//- [x]/' TASKS.md; echo "work of iteration $RALPH_ITERATION" >> work.txt; echo ticked`];

describe("type: review", () => {
  test("changes once, then approve: DONE in iteration 2, and the first findings are in iteration 2's prompt", async () => {
    const state = outside();
    const repo = reviewRepo("changes,approve", state);
    const prompts = join(state, "prompts");
    const result = await runRalph(["run", "--name", "r", "-n", "4", "--completion-promise", "DONE", "write the work file", ...worker(prompts)], repo, gitEnv());
    assert.equal(result.code, 0, result.stdout + result.stderr);
    assert.equal(readStatus(runDir(repo)).exit_reason, "DONE");
    assert.deepEqual(reviews(repo).map((event) => [event.iteration, event.verdict]), [[1, "changes"], [2, "approve"]]);
    const [first, second] = readFileSync(prompts, "utf8").split("\u0000");
    assert.doesNotMatch(first ?? "", /FINDING-1/);
    assert.match(second ?? "", /## Review of your last iteration[\s\S]*asked for changes[\s\S]*FINDING-1: work\.txt needs a usage section/);
    // The reviewer got the task and the run's diff, on stdin: nothing is approved yet, so iteration 1's line too.
    const asked = readFileSync(join(state, "review-2.txt"), "utf8");
    assert.match(asked, /write the work file/);
    assert.match(asked, /^\+line 1\n\+line 2$/m);
    assert.match(asked, /read-only/);
    // status, ralph status and the terminal say so.
    assert.deepEqual(readStatus(runDir(repo)).review, { iteration: 2, verdict: "approve", detail: "Review 2: the change does what the task asks." });
    const status = spawnSync(process.execPath, [RALPH, "status", "r"], { cwd: repo, env: gitEnv(), encoding: "utf8" });
    assert.match(status.stdout, /^review +iteration 2: approve/m);
    assert.match(result.stdout, /review asks for changes: fixture reviewer \(FINDING-1: work\.txt needs a usage section\.\)/);
    assert.match(result.stdout, /review approved: fixture reviewer/);
    const logs = spawnSync(process.execPath, [RALPH, "logs", "r"], { cwd: repo, env: gitEnv(), encoding: "utf8" });
    assert.match(logs.stdout, /review asks for changes: fixture reviewer/);
  });

  test("with a task list: the last task ticked but the review asks for changes: not NO_WORK; an iteration without a task gets the findings", async () => {
    const state = outside();
    const repo = reviewRepo("changes,approve", state);
    writeFileSync(join(repo, "TASKS.md"), "- [ ] Add the work file\n");
    const prompts = join(state, "prompts");
    const tick = ["--", "sh", "-c", `cat >> '${prompts}'; printf '\\0' >> '${prompts}'; sed -i 's/- \\[ \\]/- [x]/' TASKS.md; echo "line $RALPH_ITERATION" >> work.txt; echo ticked`];
    const result = await runRalph(["run", "--name", "r", "-n", "3", "--tasks", "TASKS.md", "work", ...tick], repo, gitEnv());
    assert.equal(result.code, 0, result.stdout + result.stderr);
    assert.equal(readStatus(runDir(repo)).exit_reason, "DONE");
    const started = readEvents(runDir(repo)).filter((event) => event.type === "iteration_started");
    assert.deepEqual(started.map((event) => event.task === null), [false, true]);
    assert.match(readFileSync(prompts, "utf8").split("\u0000")[1] ?? "", /FINDING-1/);
  });

  test("with a task list, the one review after the last task gets every task's change, not only the last iteration's", async () => {
    const state = outside();
    const repo = reviewRepo("approve", state);
    writeFileSync(join(repo, "TASKS.md"), "- [ ] First task\n- [ ] Second task\n");
    // One task a iteration, no promise: the review runs once, after iteration 2 ticks the last task.
    const result = await runRalph(["run", "--name", "r", "-n", "3", "--tasks", "TASKS.md", "work", ...TICK_ONE_TASK], repo, gitEnv());
    assert.equal(result.code, 0, result.stdout + result.stderr);
    assert.deepEqual(reviews(repo).map((event) => [event.iteration, event.verdict]), [[2, "approve"]]);
    const asked = readFileSync(join(state, "review-1.txt"), "utf8");
    assert.match(asked, /^\+work of iteration 1$/m, "the first task's work reached the reviewer as a change");
    assert.match(asked, /^\+work of iteration 2$/m);
    assert.match(asked, /^\+- \[x\] First task$/m);
  });

  test("ralph continue: the review's diff still starts where the run first started, so the first part's work is in it", async () => {
    const state = outside();
    const repo = reviewRepo("approve", state);
    writeFileSync(join(repo, "TASKS.md"), "- [ ] First task\n- [ ] Second task\n");
    const first = await runRalph(["run", "--name", "r", "-n", "1", "--tasks", "TASKS.md", "work", ...TICK_ONE_TASK], repo, gitEnv());
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
    const first = await runRalph(["run", "--name", "r", "-n", "1", "--tasks", "TASKS.md", "work", ...TICK_ONE_TASK], repo, gitEnv());
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
      const hide = ["--", "sh", "-c", `cat > /dev/null; git update-index ${flag} app.txt; echo 'HIDDEN CHANGE' >> app.txt; echo seen > notes.txt; echo '<promise>DONE</promise>'`];
      const result = await runRalph(["run", "--name", "r", "-n", "1", "--completion-promise", "DONE", "work", ...hide], repo, gitEnv());
      assert.equal(result.code, 0, result.stdout + result.stderr);
      const asked = readFileSync(join(state, "review-1.txt"), "utf8");
      assert.match(asked, /^\+seen$/m);
      assert.match(asked, /^\+HIDDEN CHANGE$/m, "the flagged file's change reached the reviewer");
    });
  }

  test("an agent that breaks the repository (.git/HEAD) so no diff can be taken gets no review that counts: the reviewer is not run", async () => {
    const state = outside();
    const repo = reviewRepo("approve", state);
    const breakGit = ["--", "sh", "-c", `cat > /dev/null; echo 'HIDDEN CHANGE' > app.txt; echo garbage > .git/HEAD; echo '<promise>DONE</promise>'`];
    const result = await runRalph(["run", "--name", "r", "-n", "1", "--completion-promise", "DONE", "work", ...breakGit], repo, gitEnv());
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
    ["every task ticked without the promise, so no review ran: not NO_WORK", ["--completion-promise", "DONE"], "echo ticked"],
  ] as const) {
    test(`no review saw the work: ${name}`, async () => {
      const state = outside();
      const repo = reviewRepo("approve", state);
      writeFileSync(join(repo, "TASKS.md"), "- [ ] First task\n- [ ] Second task\n");
      const tick = ["--", "sh", "-c", `cat > /dev/null; sed -i 's/- \\[ \\]/- [x]/' TASKS.md; echo work >> work.txt; ${end}`];
      const result = await runRalph(["run", "--name", "r", "-n", "2", "--tasks", "TASKS.md", ...flags, "work", ...tick], repo, gitEnv());
      assert.equal(result.code, 3, result.stdout + result.stderr);
      assert.equal(readStatus(runDir(repo)).exit_reason, "MAX_ITERATIONS");
      assert.deepEqual(reviews(repo), []);
    });
  }

  test("after an iteration that ticked every task and failed, the next one's claim is reviewed, the failed one's work in the diff", async () => {
    const state = outside();
    const repo = reviewRepo("approve", state);
    writeFileSync(join(repo, "TASKS.md"), "- [ ] First task\n");
    const work = ["--", "sh", "-c", `cat > /dev/null; sed -i 's/- \\[ \\]/- [x]/' TASKS.md; echo "work of iteration $RALPH_ITERATION" >> work.txt; [ "$RALPH_ITERATION" = 1 ] && exit 1; echo '<promise>DONE</promise>'`];
    const result = await runRalph(["run", "--name", "r", "-n", "3", "--tasks", "TASKS.md", "--completion-promise", "DONE", "work", ...work], repo, gitEnv());
    assert.equal(result.code, 0, result.stdout + result.stderr);
    assert.equal(readStatus(runDir(repo)).exit_reason, "DONE");
    assert.deepEqual(reviews(repo).map((event) => [event.iteration, event.verdict]), [[2, "approve"]]);
    assert.match(readFileSync(join(state, "review-1.txt"), "utf8"), /^\+work of iteration 1$/m);
  });

  test("with --task: the task marked done while the review asks for changes does not end the run DONE", async () => {
    const state = outside();
    const repo = reviewRepo("changes,approve", state);
    writeFileSync(join(repo, "prd.json"), `${JSON.stringify({ userStories: [{ id: "US-1", title: "work file", passes: false }, { id: "US-2", title: "other", passes: false }] }, null, 2)}\n`);
    const mark = ["--", "sh", "-c", `cat > /dev/null; sed -i '0,/"passes": false/s//"passes": true/' prd.json; echo "line $RALPH_ITERATION" >> work.txt; echo marked`];
    const result = await runRalph(["run", "--name", "r", "-n", "3", "--tasks", "prd.json", "--task", "US-1", "work", ...mark], repo, gitEnv());
    assert.equal(result.code, 0, result.stdout + result.stderr);
    assert.equal(readStatus(runDir(repo)).exit_reason, "DONE");
    assert.deepEqual(reviews(repo).map((event) => [event.iteration, event.verdict]), [[1, "changes"], [2, "approve"]]);
  });

  test("a reviewer script in the work tree that the agent rewrites to approve is not run: no verdict, the run never ends DONE", async () => {
    const repo = tempRepo();
    writeFileSync(join(repo, "review.sh"), "cat > /dev/null\necho 'FINDING: not yet.'\necho '<verdict>changes</verdict>'\n");
    writeFileSync(join(repo, "ralph.yaml"), `completion_criteria:\n  - type: review\n    agent: command\n    check: the person's reviewer\n    command: ["sh", "review.sh"]\n`);
    git(repo, "add", "-A");
    git(repo, "commit", "-q", "-m", "the person's reviewer");
    // The agent rewrites the reviewer to approve, changes a file and claims the promise.
    const agent = ["--", "sh", "-c", `cat > /dev/null; printf 'cat > /dev/null\\necho "<verdict>approve</verdict>"\\n' > review.sh; echo "line $RALPH_ITERATION" >> work.txt; echo '<promise>DONE</promise>'`];
    const result = await runRalph(["run", "--name", "r", "-n", "2", "--completion-promise", "DONE", "work", ...agent], repo, gitEnv());
    assert.equal(result.code, 3, result.stdout + result.stderr);
    assert.match(readFileSync(join(repo, "review.sh"), "utf8"), /approve/, "the agent did rewrite it");
    const verdicts = reviews(repo);
    assert.deepEqual(verdicts.map((event) => event.verdict), ["none", "none"]);
    assert.match(String(verdicts[0]?.reason), /^not run: the reviewer's script .*\/review\.sh changed since the run started; ralph runs only the script as it was then$/);
    // Control: the rewritten script, run as ralph ran it before, approves.
    assert.match(spawnSync("sh", ["review.sh"], { cwd: repo, input: "", encoding: "utf8" }).stdout, /<verdict>approve<\/verdict>/);
  });

  test("a diff too large to show whole is no approval: the reviewer's approve gives no verdict (a small diff's approve ends DONE)", async () => {
    const state = outside();
    const repo = reviewRepo("approve,approve", state);
    const agent = ["--", "sh", "-c", `cat > /dev/null; head -c 300000 /dev/zero | tr '\\0' 'x' | fold -w 100 > big.txt; echo '<promise>DONE</promise>'`];
    const result = await runRalph(["run", "--name", "r", "-n", "1", "--completion-promise", "DONE", "work", ...agent], repo, gitEnv());
    assert.equal(result.code, 3, result.stdout + result.stderr);
    const [verdict] = reviews(repo);
    assert.equal(verdict?.verdict, "none");
    assert.equal(verdict?.reason, "the run's diff is too large to show whole (over 200 KiB); an approval of part of it does not count");
    // Control: the same reviewer approving a small change ends the run DONE.
    const small = reviewRepo("approve", outside());
    const done = await runRalph(["run", "--name", "r", "-n", "1", "--completion-promise", "DONE", "work", "--", "sh", "-c", "cat > /dev/null; echo x > small.txt; echo '<promise>DONE</promise>'"], small, gitEnv());
    assert.equal(done.code, 0, done.stdout + done.stderr);
  });

  test("control: a reviewer that always asks for changes never lets the run end DONE", async () => {
    const state = outside();
    const repo = reviewRepo("changes", state);
    const result = await runRalph(["run", "--name", "r", "-n", "3", "--completion-promise", "DONE", "work", ...worker(join(state, "prompts"))], repo, gitEnv());
    assert.equal(result.code, 3, result.stdout + result.stderr);
    assert.equal(readStatus(runDir(repo)).exit_reason, "MAX_ITERATIONS");
    assert.deepEqual(reviews(repo).map((event) => event.verdict), ["changes", "changes", "changes"]);
    assert.equal((readStatus(runDir(repo)).review as { verdict: string }).verdict, "changes");
  });

  for (const [answer, reason] of [
    ["quoted", /no <verdict> tag|not at the end/],
    ["crash", /the reviewer failed: exit 1/],
  ] as const) {
    test(`a reviewer whose answer is "${answer}" is no approval`, async () => {
      const state = outside();
      const repo = reviewRepo(answer, state);
      const result = await runRalph(["run", "--name", "r", "-n", "1", "--completion-promise", "DONE", "work", ...worker(join(state, "prompts"))], repo, gitEnv());
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
    const result = await runRalph(["run", "--name", "r", "-n", "1", "--completion-promise", "DONE", "work", ...worker(join(state, "prompts"))], repo, gitEnv());
    assert.equal(result.code, 3, result.stdout + result.stderr);
    const [review] = reviews(repo);
    assert.equal(review?.verdict, "none");
    assert.match(String(review?.reason), /the reviewer failed: timed out/);
    assert.equal(processAlive(Number(readFileSync(join(state, "hang.pid"), "utf8"))), false, "the hung reviewer was ended");
  });

  test("Ctrl-C while the reviewer runs ends it and the run (INTERRUPTED), the iteration recorded unjudged", async () => {
    const state = outside();
    const repo = reviewRepo("hang", state);
    const started = startRalph(["run", "--name", "r", "-n", "2", "--completion-promise", "DONE", "work", ...worker(join(state, "prompts"))], repo, gitEnv());
    await waitForFile(join(state, "hang.pid"));
    started.child.kill("SIGINT");
    const result = await finishWithin(started, 20_000);
    assert.equal(result.signal, "SIGINT", result.stdout + result.stderr);
    assert.equal(readStatus(runDir(repo)).exit_reason, "INTERRUPTED");
    assert.equal(processAlive(Number(readFileSync(join(state, "hang.pid"), "utf8"))), false, "the reviewer was ended");
    assert.deepEqual(readEvents(runDir(repo)).filter((event) => event.type === "iteration_ended").map((event) => event.result), ["interrupted"]);
  });

  test("outside a sandbox, a reviewer that writes in the tree gives no verdict that counts, and the run says so", async () => {
    const state = outside();
    const repo = reviewRepo("write", state);
    const result = await runRalph(["run", "--name", "r", "-n", "1", "--completion-promise", "DONE", "work", ...worker(join(state, "prompts"))], repo, gitEnv());
    assert.equal(result.code, 3, result.stdout + result.stderr);
    assert.equal(existsSync(join(repo, "reviewer-was-here.txt")), true, "the write itself is not stopped outside a sandbox");
    const [review] = reviews(repo);
    assert.equal(review?.verdict, "none");
    assert.match(String(review?.reason), /the reviewer changed the work tree \(working tree changed: reviewer-was-here\.txt\)/);
  });

  test("without git: the reviewer is told there is no diff, and the run says once that a change by it cannot be seen", async () => {
    const state = outside();
    const dir = outside();
    const command = [process.execPath, REVIEWER, "--answers", "changes,changes,approve", "--state", state];
    writeFileSync(join(dir, "ralph.yaml"), `completion_criteria:\n  - type: review\n    agent: command\n    command: ${JSON.stringify(command)}\n`);
    const result = await runRalph(["run", "--name", "r", "-n", "3", "--completion-promise", "DONE", "work", ...worker(join(state, "prompts"))], dir, cleanEnv());
    assert.equal(result.code, 0, result.stdout + result.stderr);
    assert.match(readFileSync(join(state, "review-1.txt"), "utf8"), /\(no diff: no git snapshot of .*not a git repository/);
    const log = readFileSync(join(dir, ".ralph", "runs", "r", "run.log"), "utf8");
    assert.equal((log.match(/ralph cannot see whether a reviewer changes the work tree here/g) ?? []).length, 1, log);
  });

  test("the reviewer's spend counts toward --max-cost and the run's cost", async () => {
    const state = outside();
    const repo = tempRepo();
    // The reviewer is Claude Code (a fake printing stream-json, $0.01 a call, no verdict); the worker reports no cost.
    writeFileSync(join(repo, "ralph.yaml"), "completion_criteria:\n  - type: review\n    agent: claude\n    model: reviewer-model\n");
    const env = { ...fakeClaudeEnv(state), GIT_CONFIG_GLOBAL: process.env.GIT_CONFIG_GLOBAL ?? "", GIT_CONFIG_NOSYSTEM: "1" };
    const result = await runRalph(["run", "--name", "r", "-n", "5", "--max-cost", "0.015", "--completion-promise", "DONE", "work", ...worker(join(state, "prompts"))], repo, env);
    assert.equal(result.code, 3, result.stdout + result.stderr);
    const status = readStatus(runDir(repo));
    assert.equal(status.exit_reason, "BUDGET_EXCEEDED");
    assert.equal(status.iteration, 2);
    assert.ok(Math.abs(Number(status.cost_usd) - 0.02) < 1e-9, String(status.cost_usd));
    assert.deepEqual(reviews(repo).map((event) => event.cost_usd), [0.01, 0.01]);
  });

  test("a reviewer is not started once the agent's iteration spent the budget", async () => {
    const state = outside();
    const repo = tempRepo();
    writeFileSync(join(repo, "ralph.yaml"), "completion_criteria:\n  - type: review\n    agent: claude\n");
    // Agent and reviewer are the fake Claude Code ($0.01 a call); the agent claims the promise.
    const env = { ...fakeClaudeEnv(state, "--promise", "DONE"), GIT_CONFIG_GLOBAL: process.env.GIT_CONFIG_GLOBAL ?? "", GIT_CONFIG_NOSYSTEM: "1" };
    const result = await runRalph(["run", "--name", "r", "--agent", "claude", "-n", "3", "--max-cost", "0.005", "--completion-promise", "DONE", "work"], repo, env);
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
    const result = await runRalph(["run", "--name", "r", "--agent", "demo", "-n", "2", "--tasks", "TASKS.md", "work"], repo, gitEnv({ RALPH_DEMO_DELAY_MS: "0" }));
    assert.equal(result.code, 0, result.stdout + result.stderr);
    const [review] = reviews(repo);
    assert.equal(review?.verdict, "approve");
    assert.match(String(review?.findings), /read the iteration's diff \([1-9]\d* added lines?\)/);
    assert.ok(Math.abs(Number(readStatus(runDir(repo)).cost_usd) - (0.0123 + 0.0042)) < 1e-9);
  });

  test("a bad review criterion is one usage line, exit 2, and no run", async () => {
    for (const [yaml, message] of [
      ["  - type: review\n    agent: nobody\n", /completion criterion 1 \(review\) needs "agent": one of claude, codex, gemini, opencode, demo, command, got "nobody"/],
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
  const result = spawnSync(process.execPath, [RALPH, "doctor", "--json"], { env: cleanEnv(), encoding: "utf8", timeout: 60_000 });
  const sandbox = (JSON.parse(result.stdout) as { sandbox?: { ok: boolean; why?: string } }).sandbox;
  return sandbox?.ok ? null : `no sandbox here: ${sandbox?.why ?? "doctor says nothing"}`;
}

describe("type: review in a --sandbox run", { skip: sandboxMissing() ?? false }, () => {
  test("the reviewer runs in the sandbox with the tree read-only: its write fails, and its approval counts", async () => {
    const repo = reviewRepo("write", null);
    // The worker runs sandboxed too, so it records nothing outside the tree: it only writes work.txt.
    const work = ["--", "sh", "-c", `cat > /dev/null; echo "line $RALPH_ITERATION" >> work.txt; echo '<promise>DONE</promise>'`];
    const result = await runRalph(["run", "--sandbox", "--name", "r", "-n", "1", "--completion-promise", "DONE", "work", ...work], repo, gitEnv());
    assert.equal(result.code, 0, result.stdout + result.stderr);
    assert.equal(existsSync(join(repo, "reviewer-was-here.txt")), false, "the sandboxed reviewer wrote in the tree");
    assert.equal(readFileSync(join(repo, "work.txt"), "utf8"), "line 1\n", "the sandboxed worker could write");
    const [review] = reviews(repo);
    assert.equal(review?.verdict, "approve");
    assert.match(String(review?.findings), /could not write: EROFS/);
  });
});
