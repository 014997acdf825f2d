// What a person sees and can do: decisions explained, next steps, run selection, no-op commands, help.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fakeAgent, readEvents, readStatus, runRalph, startRalph, tempProjects, waitForFile, waitUntil } from "../helpers/cli.js";

const project = tempProjects("ralph-talk-");
const runDir = (dir: string, id: string) => join(dir, ".ralph", "runs", id);
const PRINT_ARGV = ["--", process.execPath, "-e", "console.log(JSON.stringify(process.argv.slice(1)))", "--"];

describe("decisions, explained where they are made", () => {
  test("a promise with a failing check: the iteration line first, then the check, then why the promise was ignored", async () => {
    const dir = project();
    const result = await runRalph(["run", "-n", "1", "--completion-promise", "DONE", "--check", "false", "go", ...fakeAgent("--promise", "DONE")], dir);
    assert.equal(result.code, 3, result.stderr);
    const lines = result.stdout.split("\n");
    const at = (pattern: RegExp) => lines.findIndex((line) => pattern.test(line));
    const header = at(/^── iteration 1\/1 ──$/);
    const iteration = at(/^\[1\/1\] [\d.]+s continue(?: · cpu [^\n]*)?$/);
    const check = at(/^ {2}check FAILED: command: false \(exit 1\)$/);
    const ignored = at(/^ {2}promise ignored: a completion check failed/);
    assert.ok(header >= 0 && header < iteration && iteration < check && check < ignored, result.stdout);
    const ended = readEvents(onlyRun(dir)).find((event) => event.type === "iteration_ended");
    assert.equal(ended?.promise_ignored, "criteria_failing");
  });

  test("an echoed promise says it was the prompt echoed back", async () => {
    const dir = project();
    const result = await runRalph(["run", "-n", "1", "--completion-promise", "DONE", "When finished, print <promise>DONE</promise> and nothing else.", ...fakeAgent("--echo-prompt")], dir);
    assert.equal(result.code, 3, result.stderr);
    assert.match(result.stdout, /promise ignored: it is the prompt echoed back, not a claim/);
    assert.equal(readEvents(onlyRun(dir)).find((event) => event.type === "iteration_ended")?.promise_ignored, "echoed_prompt");
  });

  test("no criteria: DONE says the promise ended it, not that criteria were met; no cost for an agent that reports none", async () => {
    const dir = project();
    const result = await runRalph(["run", "-n", "2", "--completion-promise", "DONE", "go", ...fakeAgent("--promise", "DONE")], dir);
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
    assert.match(result.stdout, /^\[1\/2\] [\d.]+s (continue|done) · tokens in [\d.]+k? · out [\d.]+k? · cache read [\d.]+k? · cache write [\d.]+k? · total [\d.]+k? · \$\d+\.\d{4} so far(?: · cpu [^\n]*)?$/m);
  });
});

describe("every ending says what to do next; no-op commands say so", () => {
  test("MAX_ITERATIONS names ralph continue -n; continue without RUN takes the latest; at the cap it refuses and changes nothing", async () => {
    const dir = project();
    const first = await runRalph(["run", "-n", "1", "go", ...fakeAgent()], dir);
    assert.equal(first.code, 3);
    const id = readdirSync(join(dir, ".ralph", "runs"))[0] as string;
    assert.match(first.stdout, new RegExp(`^next: give it more iterations: ralph continue ${id} -n 2$`, "m"));

    const eventsBefore = readFileSync(join(runDir(dir, id), "events.jsonl"), "utf8");
    const atCap = await runRalph(["continue"], dir);
    assert.equal(atCap.code, 2);
    assert.equal(atCap.stderr, `ralph: run ${id} has used 1 of its 1 iterations; nothing to continue. Raise the cap: ralph continue ${id} -n 2\n`);
    assert.equal(readFileSync(join(runDir(dir, id), "events.jsonl"), "utf8"), eventsBefore, "nothing was started");

    const more = await runRalph(["continue", "-n", "2"], dir);
    assert.equal(more.code, 3, more.stderr);
    assert.match(more.stdout, /continuing after iteration 1; the next is iteration 2/);
    assert.match(more.stdout, /^── iteration 2\/2 ──$/m);
    assert.match(readFileSync(join(runDir(dir, id), "run.log"), "utf8"), / run continued after iteration 1$/m);
    assert.equal(readStatus(runDir(dir, id)).iteration, 2);
  });

  for (const command of ["pause", "resume", "stop"]) {
    test(`${command} on an ended run says it has ended, exits 2 and leaves no sentinel`, async () => {
      const dir = project();
      await runRalph(["run", "--name", "done-run", "-n", "1", "go", ...fakeAgent()], dir);
      const result = await runRalph([command, "done-run"], dir);
      assert.equal(result.code, 2);
      assert.equal(result.stderr, `ralph: run done-run has already ended (MAX_ITERATIONS); nothing to ${command}. Go on with it: ralph continue done-run\n`);
      assert.deepEqual(readdirSync(runDir(dir, "done-run")).filter((name) => /^(STOP|PAUSE)/.test(name)), []);
    });
  }
});

describe("finding runs and projects", () => {
  test("the latest run is the most recently started, not the alphabetically last; list is in start order", async () => {
    const dir = project();
    await runRalph(["run", "--name", "zzz-first", "-n", "1", "go", ...fakeAgent()], dir);
    const second = await runRalph(["run", "-n", "1", "go", ...fakeAgent()], dir);
    assert.equal(second.code, 3);
    const newer = readdirSync(join(dir, ".ralph", "runs")).find((name) => name !== "zzz-first") as string;
    const status = JSON.parse((await runRalph(["status", "--json"], dir)).stdout) as { id: string };
    assert.equal(status.id, newer);
    const listed = JSON.parse((await runRalph(["list", "--json"], dir)).stdout) as { runs: Array<{ id: string }> };
    assert.deepEqual(listed.runs.map((run) => run.id), ["zzz-first", newer]);
  });

  test("from a subdirectory, commands find the project by walking up to .ralph/", async () => {
    const dir = project();
    await runRalph(["run", "--name", "r", "-n", "1", "go", ...fakeAgent()], dir);
    const deep = join(dir, "src", "deeper");
    mkdirSync(deep, { recursive: true });
    const listed = JSON.parse((await runRalph(["list", "--json"], deep)).stdout) as { runs: Array<{ id: string }> };
    assert.deepEqual(listed.runs.map((run) => run.id), ["r"]);
    assert.equal((await runRalph(["status"], deep)).code, 0);
  });

  test("control: a directory with no .ralph/ above it has no runs", async () => {
    const listed = await runRalph(["list"], project());
    assert.equal(listed.stdout, "no runs in .ralph/runs\n");
  });
});

describe("the first hour", () => {
  test("bare ralph prints help and exits 0", async () => {
    const result = await runRalph([], project());
    assert.equal(result.code, 0);
    assert.match(result.stdout, /^Usage: ralph \[options\] \[command\]/);
    assert.match(result.stdout, /continue \[options\] \[run\]/);
  });

  test("unknown commands and options suggest the closest one", async () => {
    const dir = project();
    const cases: Array<[string[], string]> = [
      [["stauts"], "ralph: unknown command 'stauts' (did you mean status?); see ralph --help\n"],
      [["list", "--actve"], "ralph: unknown option '--actve' (did you mean --active?)\n"],
      [["run", "--max-iteration", "2", "go"], "ralph: unknown option '--max-iteration' (did you mean --max-iterations?)\n"],
    ];
    for (const [args, stderr] of cases) {
      const result = await runRalph(args, dir);
      assert.deepEqual([result.code, result.stderr], [2, stderr]);
    }
  });

  test("--agent-args and agent_args reach the agent as argv, split with quotes and nothing expanded", async () => {
    const dir = project();
    const flag = await runRalph(["run", "--name", "a", "-n", "1", "--agent-args", `--x 'a b' $HOME * "c\\"d"`, "go", ...PRINT_ARGV], dir);
    assert.equal(flag.code, 3, flag.stderr);
    assert.equal(readFileSync(join(runDir(dir, "a"), "iter-001.log"), "utf8"), `${JSON.stringify(["--x", "a b", "$HOME", "*", 'c"d'])}\n`);
    writeFileSync(join(dir, "ralph.yaml"), "agent_args:\n  - --y\n  - two words\n");
    const yaml = await runRalph(["run", "--name", "b", "-n", "1", "go", ...PRINT_ARGV], dir);
    assert.equal(yaml.code, 3, yaml.stderr);
    assert.equal(readFileSync(join(runDir(dir, "b"), "iter-001.log"), "utf8"), `${JSON.stringify(["--y", "two words"])}\n`);
    const bad = await runRalph(["run", "-n", "1", "--agent-args", "'unbalanced", "go", ...PRINT_ARGV], dir);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /^ralph: --agent-args: expected arguments with balanced quotes/);
  });

  test("the permission mode is stated at start; a permission mode in --agent-args replaces it; --dry-run shows the prompt", async () => {
    const dir = project();
    const plain = await runRalph(["run", "--agent", "claude", "--dry-run", "--dry-run-delay", "0", "-n", "1", "line one\nline two"], dir);
    assert.equal(plain.code, 0, plain.stderr);
    assert.match(plain.stdout, /^claude runs with --dangerously-skip-permissions: it edits files and runs commands without asking; to change that, pass --agent-args/m);
    assert.match(plain.stdout, /dry run: would run \[.*"--dangerously-skip-permissions"/);
    assert.match(plain.stdout, /dry run: the prompt \(17 characters\):\n {2}\| line one\n {2}\| line two\n/);
    const chosen = await runRalph(["run", "--agent", "claude", "--dry-run", "--dry-run-delay", "0", "-n", "1", "--agent-args", "--permission-mode acceptEdits", "go"], dir);
    assert.equal(chosen.code, 0, chosen.stderr);
    assert.match(chosen.stdout, /^claude runs with the permission mode from --agent-args: --permission-mode acceptEdits$/m);
    assert.doesNotMatch(chosen.stdout, /dangerously-skip-permissions/);
  });
});

function onlyRun(dir: string): string {
  const ids = readdirSync(join(dir, ".ralph", "runs"));
  assert.equal(ids.length, 1);
  return runDir(dir, ids[0] as string);
}


describe("ralph init", () => {
  test("a coherent scaffold: no active placeholder task, a valid ralph.yaml, and the next command printed", async () => {
    const dir = project();
    const init = await runRalph(["init"], dir);
    assert.equal(init.code, 0, init.stderr);
    assert.match(init.stdout, /^next: write the task into PROMPT\.md, then start the loop:\n {2}ralph run /m);
    // An ad-hoc run carries exactly its own prompt: no task from a scaffolded list is appended.
    const adHoc = await runRalph(["run", "--name", "adhoc", "--dry-run", "--dry-run-delay", "0", "-n", "1", "ad hoc"], dir);
    assert.equal(adHoc.code, 0, adHoc.stderr);
    assert.match(adHoc.stdout, /dry run: the prompt \(6 characters\):\n {2}\| ad hoc\n\[1\/1\]/);
    assert.match(adHoc.stdout, /with the claude agent \(max 1 iteration\)/);
    // Without words the run takes PROMPT.md and the defaults of ralph.yaml (the promise).
    const fromFile = await runRalph(["run", "--name", "file", "--dry-run", "--dry-run-delay", "0", "-n", "1"], dir);
    assert.equal(fromFile.code, 0, fromFile.stderr);
    assert.match(fromFile.stdout, /\| When the whole task is done and the tests pass, end your final message with <promise>DONE<\/promise>\./);
    assert.doesNotMatch(fromFile.stdout, /Current task/);
    assert.match(readFileSync(join(dir, "ralph.yaml"), "utf8"), /^# completion_criteria:/m);
    assert.match(readFileSync(join(dir, ".gitignore"), "utf8"), /^\.ralph\/$/m);
  });
});

describe("pausing, said where it happens", () => {
  test("a paused run says how to resume; resume on a run that is not paused exits 2; status names the next step", async () => {
    const dir = project();
    const gate = join(dir, "gate");
    const started = startRalph(["run", "--name", "p", "-n", "2", "--completion-promise", "DONE", "--check", "true", "go", ...fakeAgent("--wait-for", gate)], dir);
    try {
      await waitForFile(`${gate}.started`);
      const notPaused = await runRalph(["resume", "p"], dir);
      assert.deepEqual([notPaused.code, notPaused.stderr], [2, "ralph: run p is not paused; nothing to resume\n"]);
      assert.equal((await runRalph(["pause", "p"], dir)).code, 0);
      const twice = await runRalph(["pause", "p"], dir);
      assert.equal(twice.code, 2);
      writeFileSync(gate, "");
      await waitUntil(() => readStatus(runDir(dir, "p")).state === "paused", "the run to pause");
      assert.match((await runRalph(["status", "p"], dir)).stdout, /^next {7}ralph resume p$/m);
      assert.equal((await runRalph(["resume", "p"], dir)).code, 0);
      const result = await started.done;
      assert.equal(result.code, 3, result.stderr);
      assert.match(result.stdout, /^paused: the run waits before its next iteration; go on with ralph resume p$/m);
      // The promise was never claimed, so the configured check did not run: the run says so.
      assert.match(result.stdout, /^\[1\/2\] [\d.]+s continue(?: · cpu [^\n]*)?\n {2}checks not run: they run once the promise is claimed$/m);
      assert.match((await runRalph(["status", "p"], dir)).stdout, /^next {7}give it more iterations: ralph continue p -n 4$/m);
    } finally {
      started.child.kill("SIGKILL");
    }
  });
});
