// Completion rules end to end: criteria with and without a promise, task lists, failures, stalls, usage limits,
// and each decision explained where it is made (a promise ignored, and why), said once.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  cleanEnv,
  completionMarker,
  fakeAgent,
  fakeClaudeEnv,
  onlyRunDir,
  readEvents,
  readStatus,
  runRalph,
  tempProjects,
} from "../helpers/cli.js";

const project = tempProjects("ralph-completion-");
const runDir = (dir: string) => join(dir, ".ralph", "runs", "c");
const runLog = (dir: string) => readFileSync(join(runDir(dir), "run.log"), "utf8");
const started = (dir: string) => readEvents(runDir(dir)).filter((e) => e.type === "iteration_started");
const count = (text: string, pattern: RegExp) => text.split("\n").filter((line) => pattern.test(line)).length;

function gitProject(): string {
  const dir = project();
  execFileSync("git", ["init", "-q"], { cwd: dir });
  execFileSync("git", ["config", "user.email", "test@example.invalid"], { cwd: dir });
  execFileSync("git", ["config", "user.name", "Test"], { cwd: dir });
  writeFileSync(join(dir, "README"), "x\n");
  execFileSync("git", ["add", "-A"], { cwd: dir });
  execFileSync("git", ["commit", "-q", "-m", "init"], { cwd: dir });
  return dir;
}

describe("completion criteria", () => {
  test("a promise claimed while a check fails goes on with the failing output in the next prompt; DONE once it passes", async () => {
    const dir = project();
    const prompts = join(dir, "prompts.bin");
    const check = "test -f ok.txt || { echo '3 tests failed: ok.txt is missing'; exit 1; }";
    const result = await runRalph(
      [
        "run",
        "--name",
        "c",
        "-n",
        "5",
        "--completion-promise",
        "DONE",
        "--check",
        check,
        "fix the tests",
        ...fakeAgent("--promise", "DONE", "--record", prompts, "--write-at", "2", join(dir, "ok.txt")),
      ],
      dir,
    );
    assert.equal(result.code, 0, result.stderr);
    const [first, second] = readFileSync(prompts, "utf8").split("\u0000");
    assert.equal(first, "fix the tests");
    assert.match(second ?? "", /^fix the tests\n/);
    assert.match(second ?? "", /3 tests failed: ok\.txt is missing/);
    assert.match(second ?? "", /test -f ok\.txt/);
    const verdicts = readEvents(runDir(dir))
      .filter((e) => e.type === "criteria_checked")
      .map((e) => e.passed);
    assert.deepEqual(verdicts, [false, true]);
    assert.match(runLog(dir), /LOOP_COMPLETE: all criteria met\./);
    assert.deepEqual(completionMarker(runDir(dir)), ["completion_reason=DONE", "promise=COMPLETE"]);
    assert.match(readFileSync(join(runDir(dir), "progress.txt"), "utf8"), /criterion_passed=false/);
  });

  test("a no_files criterion from ralph.yaml ends the run when the last issue file is removed", async () => {
    const dir = project();
    mkdirSync(join(dir, "issues"));
    for (const name of ["a.md", "b.md", "c.md"]) writeFileSync(join(dir, "issues", name), "todo\n");
    writeFileSync(
      join(dir, "ralph.yaml"),
      "max_iterations: 10\ncompletion_criteria:\n  - type: no_files\n    check: issues/*.md\n",
    );
    const result = await runRalph(
      ["run", "--name", "c", "fix issues", ...fakeAgent("--delete-one", join(dir, "issues"))],
      dir,
    );
    assert.equal(result.code, 0, result.stderr);
    assert.equal(readStatus(runDir(dir)).iteration, 3);
    assert.deepEqual(completionMarker(runDir(dir)), ["completion_reason=DONE", "promise=COMPLETE"]);
  });
});

describe("task lists", () => {
  test("prd.json stories are taken by priority, one per iteration, then NO_WORK", async () => {
    const dir = project();
    const prd = {
      userStories: [
        { id: "US-1", title: "third", priority: 3, passes: false },
        { id: "US-2", title: "first", priority: 1, passes: false },
        { id: "US-3", title: "done", priority: 0, passes: true },
        { id: "US-4", title: "second", priority: 2, passes: false },
      ],
    };
    writeFileSync(join(dir, "prd.json"), JSON.stringify(prd));
    const result = await runRalph(
      ["run", "--name", "c", "--agent", "demo", "-n", "10", "--tasks", "prd.json", "work"],
      dir,
      cleanEnv({ RALPH_DEMO_DELAY_MS: "0" }),
    );
    assert.equal(result.code, 0, result.stderr);
    assert.deepEqual(
      started(dir).map((e) => e.task),
      ["US-2: first", "US-4: second", "US-1: third"],
    );
    assert.deepEqual(completionMarker(runDir(dir)), ["completion_reason=NO_WORK", "promise=COMPLETE"]);
  });

  test("a Markdown checklist (CRLF) is taken in file order, skipping Optional, then NO_WORK", async () => {
    const dir = project();
    writeFileSync(
      join(dir, "TASKS.md"),
      "# Tasks\r\n- [x] old\r\n- [ ] alpha\r\n- [ ] beta\r\n## Optional\r\n- [ ] later\r\n",
    );
    const result = await runRalph(
      ["run", "--name", "c", "--agent", "demo", "-n", "10", "--tasks", "TASKS.md", "work"],
      dir,
      cleanEnv({ RALPH_DEMO_DELAY_MS: "0" }),
    );
    assert.equal(result.code, 0, result.stderr);
    assert.deepEqual(
      started(dir).map((e) => String(e.task).replace(/^line \d+: /, "")),
      ["alpha", "beta"],
    );
    assert.deepEqual(completionMarker(runDir(dir)), ["completion_reason=NO_WORK", "promise=COMPLETE"]);
  });

  test("a malformed task file is a usage error naming the file, not NO_WORK", async () => {
    const dir = project();
    writeFileSync(join(dir, "prd.json"), "{ not json");
    const result = await runRalph(["run", "--tasks", "prd.json", "work", ...fakeAgent()], dir);
    assert.equal(result.code, 2);
    assert.match(result.stderr, /prd\.json/);
    assert.equal(result.stderr.trimEnd().split("\n").length, 1);
  });
});

describe("failures and stalls", () => {
  test("FAILED after --max-failures consecutive failures; a success in between resets the count", async () => {
    const dir = project();
    const result = await runRalph(
      ["run", "--name", "c", "-n", "0", "--max-failures", "3", "go", ...fakeAgent("--fail-iterations", "1,2,4,5,6,7")],
      dir,
    );
    assert.equal(result.code, 1, result.stderr);
    assert.equal(readStatus(runDir(dir)).iteration, 6);
    assert.deepEqual(completionMarker(runDir(dir)), ["completion_reason=FAILED", "promise=COMPLETE"]);
  });

  test("STALLED after N iterations without change, with the evidence in the log", async () => {
    const dir = gitProject();
    const result = await runRalph(["run", "--name", "c", "-n", "10", "--stall-limit", "2", "go", ...fakeAgent()], dir);
    assert.equal(result.code, 1, result.stderr);
    assert.equal(readStatus(runDir(dir)).iteration, 2);
    assert.deepEqual(completionMarker(runDir(dir)), ["completion_reason=STALLED", "promise=COMPLETE"]);
    assert.match(runLog(dir), /no progress in iteration 2 \(2\/2\): git HEAD [0-9a-f]{12}/);
  });

  test("an agent that commits each iteration is not stalled", async () => {
    const dir = gitProject();
    const result = await runRalph(
      ["run", "--name", "c", "-n", "4", "--stall-limit", "1", "go", ...fakeAgent("--git-commit")],
      dir,
    );
    assert.equal(result.code, 3, result.stderr);
    assert.deepEqual(completionMarker(runDir(dir)), ["completion_reason=MAX_ITERATIONS", "promise=COMPLETE"]);
    assert.match(runLog(dir), /progress in iteration 4: HEAD moved/);
  });
});

describe("usage limits", () => {
  test("a usage limit with a reset time is waited out and the iteration is retried without being counted", async () => {
    const dir = project();
    const env = fakeClaudeEnv(dir, "--limit-once", join(dir, "limited"), "1");
    const result = await runRalph(["run", "--name", "c", "-n", "2", "go"], dir, env);
    assert.equal(result.code, 3, result.stderr);
    const status = readStatus(runDir(dir));
    assert.equal(status.iteration, 2);
    assert.equal(status.calls, 3);
    const events = readEvents(runDir(dir));
    const waiting = events.filter((e) => e.type === "waiting_limit");
    assert.equal(waiting.length, 1);
    assert.equal(waiting[0]?.iteration, 1);
    assert.deepEqual(
      events.filter((e) => e.type === "iteration_started").map((e) => e.iteration),
      [1, 1, 2],
    );
  });

  test("--on-limit stop ends the run at the limit", async () => {
    const dir = project();
    const env = fakeClaudeEnv(dir, "--limit-once", join(dir, "limited"), "600");
    const result = await runRalph(["run", "--name", "c", "--on-limit", "stop", "go"], dir, env);
    assert.equal(result.code, 1, result.stderr);
    assert.match(String(readStatus(runDir(dir)).last_action), /usage limit/);
    assert.deepEqual(completionMarker(runDir(dir)), ["completion_reason=FAILED", "promise=COMPLETE"]);
  });
});

describe("decisions, explained where they are made", () => {
  test("a promise with a failing check: the iteration line first, then the check, then why the promise was ignored", async () => {
    const dir = project();
    const result = await runRalph(
      ["run", "-n", "1", "--completion-promise", "DONE", "--check", "false", "go", ...fakeAgent("--promise", "DONE")],
      dir,
    );
    assert.equal(result.code, 3, result.stderr);
    const lines = result.stdout.split("\n");
    const at = (pattern: RegExp) => lines.findIndex((line) => pattern.test(line));
    const header = at(/^── iteration 1\/1 ──$/);
    const iteration = at(/^\[1\/1\] [\d.]+s continue(?: · cpu [^\n]*)?$/);
    const check = at(/^ {2}check FAILED: command: false \(exit 1\)$/);
    const ignored = at(/^ {2}promise ignored: a completion check failed/);
    assert.ok(header >= 0 && header < iteration && iteration < check && check < ignored, result.stdout);
    const ended = readEvents(onlyRunDir(dir)).find((event) => event.type === "iteration_ended");
    assert.equal(ended?.promise_ignored, "criteria_failing");
  });

  test("an echoed promise says it was the prompt echoed back", async () => {
    const dir = project();
    const result = await runRalph(
      [
        "run",
        "-n",
        "1",
        "--completion-promise",
        "DONE",
        "When finished, print <promise>DONE</promise> and nothing else.",
        ...fakeAgent("--echo-prompt"),
      ],
      dir,
    );
    assert.equal(result.code, 3, result.stderr);
    assert.match(result.stdout, /promise ignored: it is the prompt echoed back, not a claim/);
    assert.equal(
      readEvents(onlyRunDir(dir)).find((event) => event.type === "iteration_ended")?.promise_ignored,
      "echoed_prompt",
    );
  });

  test("no criteria: DONE says the promise ended it, not that criteria were met; no cost for an agent that reports none", async () => {
    const dir = project();
    const result = await runRalph(
      ["run", "-n", "2", "--completion-promise", "DONE", "go", ...fakeAgent("--promise", "DONE")],
      dir,
    );
    assert.equal(result.code, 0, result.stderr);
    assert.doesNotMatch(result.stdout, /all criteria met/);
    assert.match(result.stdout, /LOOP_COMPLETE: the promise was found \(no completion criteria are set\)/);
    assert.doesNotMatch(result.stdout, /\$0\.0000/);
    assert.match(result.stdout, /no cost reported/);
    assert.doesNotMatch(result.stdout, /\$0\.0000/);
    assert.match(result.stdout, /^next: review the changes; the whole story: ralph logs \S+$/m);
  });

  test("tokens and spend show on the iteration line when the agent reports them", async () => {
    const dir = project();
    writeFileSync(join(dir, "TASKS.md"), "- [ ] one\n");
    const result = await runRalph(["run", "--agent", "demo", "--tasks", "TASKS.md", "-n", "2", "go"], dir);
    assert.equal(result.code, 0, result.stderr);
    assert.match(
      result.stdout,
      /^\[1\/2\] [\d.]+s (continue|done) · tokens in [\d.]+k? · out [\d.]+k? · cache read [\d.]+k? · cache write [\d.]+k? · total [\d.]+k? · \$\d+\.\d{4} so far(?: · cpu [^\n]*)?$/m,
    );
  });
});

test("a final message with <promise>…</promise> in a run with no promise is said once, not every iteration", async () => {
  const dir = project();
  const result = await runRalph(
    ["run", "-n", "3", "go", "--", "sh", "-c", "echo 'all good <promise>DONE</promise>'"],
    dir,
  );
  assert.equal(result.code, 3, result.stderr);
  assert.equal(
    count(result.stdout, /holds <promise>DONE<\/promise>, but this run has no completion promise/),
    1,
    result.stdout,
  );
  // Known-false control: with the promise set, the same message ends the run and nothing is explained.
  const set = await runRalph(
    [
      "run",
      "-n",
      "3",
      "--completion-promise",
      "DONE",
      "go",
      "--",
      "sh",
      "-c",
      "echo 'all good <promise>DONE</promise>'",
    ],
    dir,
  );
  assert.equal(set.code, 0, set.stderr);
  assert.doesNotMatch(set.stdout, /no completion promise, so it ends nothing/);
});

test("outside git, 'stall detection needs git' is said once per run, and not twice in one line", async () => {
  const dir = project();
  const result = await runRalph(["run", "-n", "3", "--stall-limit", "2", "go", ...fakeAgent()], dir);
  assert.equal(result.code, 3, result.stderr);
  const lines = result.stdout.split("\n").filter((line) => /stall detection/.test(line));
  assert.equal(lines.length, 1, result.stdout);
  assert.equal(lines[0]?.split("stall detection").length, 2, lines[0]);
});
