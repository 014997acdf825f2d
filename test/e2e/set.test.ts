// `ralph set`: changing a run's settings from outside, mid-iteration or after it ended, without naming the run
// when only one is active; refused from inside the agent, whatever its environment.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import {
  agentAfter,
  assertOneLineUsageError,
  cleanEnv,
  completionMarker,
  fakeAgent,
  finishWithin,
  onlyRunDir,
  RALPH,
  readEvents,
  readStatus,
  resultOf,
  runRalph,
  startRalph,
  tempProjects,
  trackedStarts,
} from "../helpers/cli.js";
import { waitForFile } from "../helpers/wait.js";

const project = tempProjects("ralph-set-");
const start = trackedStarts();

test("ralph set max_iterations=4 with one active run needs no RUN", async () => {
  const dir = project();
  const gate = join(dir, "gate");
  const started = startRalph(["run", "-n", "1", "--name", "only", "go", ...fakeAgent("--wait-for", gate)], dir);
  try {
    await waitForFile(`${gate}.started`);
    const set = await runRalph(["set", "max_iterations=2"], dir);
    assert.equal(set.code, 0, set.stderr);
    assertOneLineUsageError(await runRalph(["set"], dir), /nothing to set/);
    writeFileSync(gate, "go");
    const result = await started.done;
    assert.equal(result.code, 3, result.stderr);
    assert.match(result.stdout + result.stderr, /2\/2|iteration 2/);
  } finally {
    started.child.kill("SIGKILL");
  }
});

test("ralph set raising max_iterations mid-run lets the run continue past the old cap", async () => {
  const dir = project();
  const gate = join(dir, "gate");
  const { child, done } = startRalph(["run", "-n", "2", "--name", "r", "go", ...fakeAgent("--wait-for", gate)], dir);
  try {
    await waitForFile(`${gate}.started`);
    const set = await runRalph(["set", "r", "max_iterations=4"], dir);
    assert.equal(set.code, 0, set.stderr);
    writeFileSync(gate, "go");
    const result = await done;
    assert.equal(result.code, 3, result.stderr);
    const runDir = onlyRunDir(dir);
    assert.equal(readStatus(runDir).iteration, 4);
    assert.deepEqual(completionMarker(runDir), ["completion_reason=MAX_ITERATIONS", "promise=COMPLETE"]);
  } finally {
    child.kill("SIGKILL");
  }
});

test("ralph set works mid-iteration; from inside the agent it is refused, whatever its environment", async () => {
  const dir = project();
  const gate = join(dir, "gate");
  // The agent tries ralph set itself, with the run's variables stripped from its environment.
  const selfSet = `env -u RALPH_RUN_DIR -u RALPH_SUPERVISOR "${process.execPath}" "${RALPH}" set s check=true max_iterations=0 > "${dir}/self-set.out" 2>&1; echo $? >> "${dir}/self-set.out"`;
  const { done } = start(dir, [
    "run",
    "--name",
    "s",
    "-n",
    "3",
    "--check",
    "false",
    "go",
    ...agentAfter(selfSet, "--wait-for", gate),
  ]);
  await waitForFile(`${gate}.started`);
  const runDir = join(dir, ".ralph", "runs", "s");
  // Refused by ralph set itself (its parent, the agent's shell, carries the run's marker), before any request is written.
  assert.match(
    readFileSync(join(dir, "self-set.out"), "utf8"),
    /ralph set is for people: it does not run inside the agent of a ralph run \(.+\)\n2\n$/,
  );
  const inAgentEnv = await runRalph(["set", "s", "check=true"], dir, cleanEnv({ RALPH_RUN_DIR: runDir }));
  assert.equal(inAgentEnv.code, 2);
  assert.match(inAgentEnv.stderr, /ralph set is for people/);
  const bad = await runRalph(["set", "s", "max_iterations=1e1"], dir);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /^ralph: max_iterations=1e1: expected max_iterations=N, a whole number/);
  // Through a link to main.js, as an install made before the CLI's entry was main.cjs left it: still ralph.
  const link = join(dirname(dir), `${basename(dir)}-ralph`);
  symlinkSync(join(dirname(RALPH), "main.js"), link);
  const viaLink = spawn(process.execPath, [link, "set", "s", "max_iterations=4"], {
    cwd: dir,
    env: cleanEnv(),
    stdio: ["ignore", "pipe", "pipe"],
  });
  const old = await finishWithin({ child: viaLink, done: resultOf(viaLink) }, 60_000);
  assert.equal(old.code, 0, old.stderr);
  assert.match(old.stdout, /run s: applied max_iterations=4/);
  const set = await runRalph(["set", "s", "check=true"], dir);
  assert.equal(set.code, 0, set.stderr);
  assert.match(set.stdout, /run s: applied checks=\["true"\]/);
  writeFileSync(gate, "");
  const result = await done;
  assert.equal(result.code, 0, result.stderr);
  assert.deepEqual(completionMarker(runDir), ["completion_reason=DONE", "promise=COMPLETE"]);
  assert.equal(readStatus(runDir).iteration, 1);
  assert.equal(readEvents(runDir).filter((e) => e.type === "state_change_rejected").length, 0);
});

test("ralph set on an ended run changes state.md for ralph continue", async () => {
  const dir = project();
  const first = await runRalph(["run", "--name", "e", "-n", "1", "--check", "false", "go", ...agentAfter("true")], dir);
  assert.equal(first.code, 3, first.stderr);
  const set = await runRalph(["set", "e", "check=true", "max_iterations=2"], dir);
  assert.equal(set.code, 0, set.stderr);
  const continued = await runRalph(["continue", "e"], dir);
  assert.equal(continued.code, 0, continued.stderr);
  assert.deepEqual(completionMarker(join(dir, ".ralph", "runs", "e")), ["completion_reason=DONE", "promise=COMPLETE"]);
});
