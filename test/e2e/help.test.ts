// Help and suggestions: bare `ralph` and `--help` print usage (and survive a reader that stops early), and an
// unknown command, option or agent name gets the closest one as a did-you-mean.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { assertOneLineUsageError, cleanEnv, RALPH, resultOf, runRalph, tempProjects } from "../helpers/cli.js";

const project = tempProjects("ralph-help-");

test("a reader closing the pipe early (ralph run --help | head -1) never crashes ralph, six times out of six", async () => {
  const dir = project();
  for (let i = 0; i < 6; i++) {
    const child = spawn(process.execPath, [RALPH, "run", "--help"], {
      cwd: dir,
      env: cleanEnv(),
      stdio: ["ignore", "pipe", "pipe"],
    });
    let first = "";
    // The reader takes the first chunk and closes its end, as head -1 does.
    child.stdout.once("data", (chunk: Buffer) => {
      first = chunk.toString("utf8");
      child.stdout.destroy();
    });
    const ended = await resultOf(child);
    assert.match(first, /^Usage: ralph run/);
    assert.equal(ended.code, 0, ended.stderr);
    assert.doesNotMatch(ended.stderr, /EPIPE|\n\s+at /);
  }
});

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
    [
      ["run", "--max-iteration", "2", "go"],
      "ralph: unknown option '--max-iteration' (did you mean --max-iterations?)\n",
    ],
  ];
  for (const [args, stderr] of cases) {
    const result = await runRalph(args, dir);
    assert.deepEqual([result.code, result.stderr], [2, stderr]);
  }
});

test("--agent cluade gets a did-you-mean; a word far from every agent gets none", async () => {
  const dir = project();
  assertOneLineUsageError(
    await runRalph(["run", "--agent", "cluade", "go"], dir),
    /got "cluade" \(did you mean claude\?\)\n?$/,
  );
  const far = await runRalph(["run", "--agent", "xyz", "go"], dir);
  assertOneLineUsageError(far, /--agent: expected one of claude/);
  assert.doesNotMatch(far.stderr, /did you mean/);
});
