// End-to-end behaviour of `ralph run` with the built CLI: caps, promises, failures, usage errors, prompts.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  FAKE_AGENT,
  completionMarker,
  onlyRunDir,
  readEvents,
  readStatus,
  runRalph,
  startRalph,
  tempProjects,
  cleanEnv,
  fakeAgent,
  fakeClaudeEnv,
} from "../helpers/cli.js";

const agent = (...args: string[]) => ["--", process.execPath, FAKE_AGENT, ...args];
const project = tempProjects("ralph-e2e-");
const runDir = (dir: string, id: string) => join(dir, ".ralph", "runs", id);
const PRINT_ARGV = ["--", process.execPath, "-e", "console.log(JSON.stringify(process.argv.slice(1)))", "--"];

describe("ralph run", () => {
  test("stops after the default cap of 3 iterations with MAX_ITERATIONS and exit 3", async () => {
    const dir = project();
    const result = await runRalph(["run", "do the work", ...agent("--print", "working")], dir);
    assert.equal(result.code, 3, result.stderr);
    const runDir = onlyRunDir(dir);
    assert.deepEqual(completionMarker(runDir), ["completion_reason=MAX_ITERATIONS", "promise=COMPLETE"]);
    assert.equal(readStatus(runDir).iteration, 3);
    assert.equal(readEvents(runDir).filter((e) => e.type === "iteration_started").length, 3);
    const log = readFileSync(join(runDir, "run.log"), "utf8");
    for (const n of [1, 2, 3]) assert.match(log, new RegExp(`=== Completed iteration ${n} ===`));
  });

  test("-n 0 runs past 3 iterations until the promise", async () => {
    const dir = project();
    const result = await runRalph(
      ["run", "-n", "0", "--completion-promise", "DONE", "go", ...agent("--promise", "DONE", "--promise-from", "5")],
      dir,
    );
    assert.equal(result.code, 0, result.stderr);
    const runDir = onlyRunDir(dir);
    assert.deepEqual(completionMarker(runDir), ["completion_reason=DONE", "promise=COMPLETE"]);
    assert.equal(readStatus(runDir).iteration, 5);
  });

  test("-n 08 is read as 8 (base 10)", async () => {
    const dir = project();
    const result = await runRalph(["run", "-n", "08", "go", ...agent()], dir);
    assert.equal(result.code, 3, result.stderr);
    assert.equal(readStatus(onlyRunDir(dir)).iteration, 8);
  });

  test("a promise only in the agent's final message ends the run with DONE; one in an earlier message does not", async () => {
    // A stand-in for the claude CLI printing stream-json: the tag in an intermediate assistant message,
    // and (from iteration 2 in the second run) in the final result.
    const fakeClaude = fakeClaudeEnv;
    const dir = project();
    const early = await runRalph(
      ["run", "-n", "2", "--completion-promise", "DONE", "go"],
      dir,
      fakeClaude(dir, "--print", "<promise>DONE</promise>"),
    );
    assert.equal(early.code, 3, early.stderr);
    assert.deepEqual(completionMarker(onlyRunDir(dir)), ["completion_reason=MAX_ITERATIONS", "promise=COMPLETE"]);
    const dir2 = project();
    const fin = await runRalph(
      ["run", "--completion-promise", "DONE", "go"],
      dir2,
      fakeClaude(dir2, "--promise", "DONE", "--promise-from", "2"),
    );
    assert.equal(fin.code, 0, fin.stderr);
    const runDir = onlyRunDir(dir2);
    assert.deepEqual(completionMarker(runDir), ["completion_reason=DONE", "promise=COMPLETE"]);
    assert.equal(readStatus(runDir).iteration, 2);
    assert.equal(readStatus(runDir).cost_usd, 0.02);
  });

  test("a promise that appears only in the prompt the agent echoes back does not end the run", async () => {
    const dir = project();
    const result = await runRalph(
      ["run", "--completion-promise", "DONE", "Say <promise>DONE</promise> when finished", ...agent("--echo-prompt")],
      dir,
    );
    assert.equal(result.code, 3, result.stderr);
    assert.deepEqual(completionMarker(onlyRunDir(dir)), ["completion_reason=MAX_ITERATIONS", "promise=COMPLETE"]);
  });

  test("a missing agent binary ends the run with FAILED, exit 1, and the marker (with the preflight off)", async () => {
    const dir = project();
    // The preflight refuses this run before it starts (preflight.test.ts); without it the run records the failure.
    const result = await runRalph(["run", "--preflight", "off", "go", "--", join(dir, "no-such-agent")], dir);
    assert.equal(result.code, 1, result.stderr);
    const runDir = onlyRunDir(dir);
    assert.deepEqual(completionMarker(runDir), ["completion_reason=FAILED", "promise=COMPLETE"]);
    assert.equal(readStatus(runDir).exit_reason, "FAILED");
  });

  test("--max-failures consecutive failures end the run with FAILED", async () => {
    const dir = project();
    const result = await runRalph(["run", "-n", "0", "--max-failures", "2", "go", ...agent("--exit", "7")], dir);
    assert.equal(result.code, 1, result.stderr);
    const runDir = onlyRunDir(dir);
    assert.deepEqual(completionMarker(runDir), ["completion_reason=FAILED", "promise=COMPLETE"]);
    assert.equal(readStatus(runDir).iteration, 2);
  });

  for (const [label, args, fragment] of [
    ["-n abc", ["run", "-n", "abc", "go"], /--max-iterations: expected a whole number/],
    ["-n -1", ["run", "-n", "-1", "go"], /max-iterations/],
    ["an unknown option", ["run", "--frobnicate", "go"], /unknown option '--frobnicate'/],
    ["a missing prompt file", ["run", "--prompt-file", "nope.md"], /--prompt-file \/.*\/nope\.md: cannot be read/],
    ["no prompt at all", ["run"], /no prompt/],
    // An empty prompt would start the agent with no task.
    ["an empty prompt", ["run", ""], /^ralph: the prompt is empty: expected the task/],
    ["a prompt of blanks", ["run", "  ", " "], /^ralph: the prompt is empty/],
    ["a bad duration", ["run", "--timeout", "soon", "go"], /--timeout: expected a duration/],
    ["a zero timeout", ["run", "--timeout", "0", "go"], /--timeout: expected a duration longer than 0/],
    ["a timeout too long for a timer", ["run", "--timeout", "1000h", "go"], /--timeout: .*at most 24 days/],
  ] as const) {
    test(`${label} is a usage error: exit 2, one line, nothing created`, async () => {
      const dir = project();
      const result = await runRalph([...args, ...agent()], dir);
      assert.equal(result.code, 2, result.stderr);
      assert.equal(result.stdout, "");
      assert.equal(result.stderr.trimEnd().split("\n").length, 1, result.stderr);
      assert.match(result.stderr, fragment);
      assert.doesNotMatch(result.stderr, /\n\s+at /);
      assert.equal(existsSync(join(dir, ".ralph")), false);
    });
  }

  test("an empty PROMPT.md or prompt file is a usage error naming the file, with nothing created", async () => {
    const dir = project();
    writeFileSync(join(dir, "PROMPT.md"), "\n  \n");
    writeFileSync(join(dir, "blank.md"), "");
    for (const [args, named] of [
      [[], /^ralph: \/\S+\/PROMPT\.md is empty: expected the task/],
      [["-p", "blank.md"], /^ralph: --prompt-file \/\S+\/blank\.md is empty/],
    ] as const) {
      const result = await runRalph(["run", ...args, ...agent()], dir);
      assert.equal(result.code, 2, result.stderr);
      assert.match(result.stderr, named);
      assert.equal(result.stderr.trimEnd().split("\n").length, 1, result.stderr);
    }
    assert.equal(existsSync(join(dir, ".ralph")), false);
  });

  test("RALPH_* environment overrides ralph.yaml, and flags override both", async () => {
    const dir = project();
    writeFileSync(join(dir, "ralph.yaml"), "max_iterations: 5\n");
    const fromYaml = await runRalph(["run", "--name", "a", "go", ...agent()], dir);
    assert.equal(fromYaml.code, 3, fromYaml.stdout + fromYaml.stderr);
    assert.equal(readStatus(join(dir, ".ralph", "runs", "a")).iteration, 5);
    const fromEnv = await runRalph(
      ["run", "--name", "b", "go", ...agent()],
      dir,
      cleanEnv({ RALPH_MAX_ITERATIONS: "2" }),
    );
    assert.equal(readStatus(join(dir, ".ralph", "runs", "b")).iteration, 2, fromEnv.stderr);
    const fromFlag = await runRalph(
      ["run", "--name", "c", "-n", "1", "go", ...agent()],
      dir,
      cleanEnv({ RALPH_MAX_ITERATIONS: "2" }),
    );
    assert.equal(readStatus(join(dir, ".ralph", "runs", "c")).iteration, 1, fromFlag.stderr);
  });

  test("a bad ralph.yaml key is a usage error naming the file, key and line", async () => {
    const dir = project();
    writeFileSync(join(dir, "ralph.yaml"), "agent: demo\nmax_iteration: 5\n");
    const result = await runRalph(["run", "go"], dir);
    assert.equal(result.code, 2);
    assert.match(result.stderr, /ralph\.yaml: line 2: unknown key "max_iteration" \(did you mean max_iterations\?\)$/m);
    // The near key only, not the list of every key (internal ones among them).
    assert.doesNotMatch(result.stderr, /completion_promise|resolve/);
    assert.equal(existsSync(join(dir, ".ralph")), false);
  });

  test("a prompt with ? * & = $ ' \" \\ and a newline reaches the agent byte-identical", async () => {
    const dir = project();
    const prompt = "fix ?x=1&y=2 * $HOME 'single' \"double\" back\\slash\nsecond line `tick` ~ ; | > <";
    const recordFile = join(dir, "received.bin");
    const result = await runRalph(["run", "-n", "1", prompt, ...agent("--record", recordFile)], dir);
    assert.equal(result.code, 3, result.stderr);
    assert.equal(readFileSync(recordFile).toString("utf8"), `${prompt}\u0000`);
    const fromFile = join(dir, "PROMPT.md");
    writeFileSync(fromFile, `${prompt}\n`);
    const second = await runRalph(["run", "-n", "1", "--name", "file", ...agent("--record", recordFile)], dir);
    assert.equal(second.code, 3, second.stderr);
    assert.equal(readFileSync(recordFile).toString("utf8"), `${prompt}\u0000${prompt}\n\u0000`);
  });

  test("--live renders the agent's messages and tool calls readably, not as raw JSON", async () => {
    const dir = project();
    writeFileSync(
      join(dir, "prd.json"),
      JSON.stringify({ userStories: [{ id: "US-1", title: "Greet", priority: 1, passes: false }] }),
    );
    const result = await runRalph(
      ["run", "--live", "--agent", "demo", "--tasks", "prd.json", "--completion-promise", "DONE", "go"],
      dir,
      cleanEnv({ RALPH_DEMO_DELAY_MS: "0" }),
    );
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /^ {2}Working on US-1: Greet$/m);
    assert.match(result.stdout, /→ Think \{"about":"Greet"\}/);
    assert.doesNotMatch(result.stdout, /"type":/);
    const quiet = await runRalph(
      ["run", "--name", "q", "--agent", "demo", "go"],
      dir,
      cleanEnv({ RALPH_DEMO_DELAY_MS: "0" }),
    );
    assert.doesNotMatch(quiet.stdout, /Working on/, "without --live the agent's messages are not shown");
  });

  test("--dry-run starts nothing, not even the check commands, and never claims DONE", async () => {
    const dir = project();
    const result = await runRalph(
      ["run", "--dry-run", "--dry-run-delay", "0", "-n", "2", "--check", "touch checked", "go", ...agent()],
      dir,
    );
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /dry run: would run \[".*fake-agent\.js"\] with the prompt on stdin/);
    assert.equal(existsSync(join(dir, "checked")), false);
    assert.deepEqual(completionMarker(onlyRunDir(dir)), ["completion_reason=DRY_RUN", "promise=COMPLETE"]);
  });

  test("a reader that closes stdout early does not take the run with it", async () => {
    const dir = project();
    const { child, done } = startRalph(
      ["run", "--json", "--name", "p", "-n", "3", "go", ...agent("--print", "hello", "--sleep", "100")],
      dir,
    );
    // Like `ralph run … | head -1`: read the first line, then close the pipe.
    await new Promise<void>((resolve) => child.stdout?.once("data", () => resolve()));
    child.stdout?.destroy();
    const result = await done;
    assert.equal(result.code, 3, result.stderr);
    assert.doesNotMatch(result.stderr, /EPIPE|\n\s+at /);
    assert.deepEqual(completionMarker(join(dir, ".ralph", "runs", "p")), [
      "completion_reason=MAX_ITERATIONS",
      "promise=COMPLETE",
    ]);
  });

  test("--json prints only events on stdout, ending with run_ended", async () => {
    const dir = project();
    const result = await runRalph(["run", "--json", "-n", "1", "go", ...agent("--print", "hello")], dir);
    assert.equal(result.code, 3, result.stderr);
    const events = result.stdout
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    assert.equal(events[0]?.type, "run_started");
    assert.equal(events.at(-1)?.type, "run_ended");
    assert.equal(events.at(-1)?.reason, "MAX_ITERATIONS");
    assert.ok(events.every((event) => event.v === 1 && typeof event.ts === "string" && typeof event.run === "string"));
  });
});

test("--agent-args and agent_args reach the agent as argv, split with quotes and nothing expanded", async () => {
  const dir = project();
  const flag = await runRalph(
    ["run", "--name", "a", "-n", "1", "--agent-args", `--x 'a b' $HOME * "c\\"d"`, "go", ...PRINT_ARGV],
    dir,
  );
  assert.equal(flag.code, 3, flag.stderr);
  assert.equal(
    readFileSync(join(runDir(dir, "a"), "iter-001.log"), "utf8"),
    `${JSON.stringify(["--x", "a b", "$HOME", "*", 'c"d'])}\n`,
  );
  writeFileSync(join(dir, "ralph.yaml"), "agent_args:\n  - --y\n  - two words\n");
  const yaml = await runRalph(["run", "--name", "b", "-n", "1", "go", ...PRINT_ARGV], dir);
  assert.equal(yaml.code, 3, yaml.stderr);
  assert.equal(
    readFileSync(join(runDir(dir, "b"), "iter-001.log"), "utf8"),
    `${JSON.stringify(["--y", "two words"])}\n`,
  );
  const bad = await runRalph(["run", "-n", "1", "--agent-args", "'unbalanced", "go", ...PRINT_ARGV], dir);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /^ralph: --agent-args: expected arguments with balanced quotes/);
});

test("ralph's own options after -- get a warning; the agent still receives them", async () => {
  const dir = project();
  const result = await runRalph(
    [
      "run",
      "-n",
      "1",
      "go",
      "--",
      "sh",
      "-c",
      "echo ok",
      "sh",
      "--completion-promise",
      "DONE",
      "--max-cost=2",
      "--model",
      "x",
    ],
    dir,
  );
  assert.equal(result.code, 3, result.stderr);
  assert.match(
    result.stderr,
    /^ralph: warning: --completion-promise, --max-cost after -- go to the agent command, not to ralph; put ralph's options before --$/m,
  );
  assert.doesNotMatch(result.stderr, /--model/, "an option agents have too is not flagged");
  // Known-false control: nothing misplaced, no warning.
  const clean = await runRalph(["run", "-n", "1", "--completion-promise", "DONE", "go", ...fakeAgent()], dir);
  assert.doesNotMatch(clean.stderr, /warning/);
});
