// Desired state stays the person's: an agent's edit of state.md never loosens the rules; a person's does apply.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { readFileSync, symlinkSync, unlinkSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { agentAfter, cleanEnv, finishWithin, completionMarker, RALPH, readEvents, readStatus, resultOf, runRalph, tempProjects, trackedStarts, waitForFile, waitUntil } from "../helpers/cli.js";

const project = tempProjects("ralph-guard-");
const start = trackedStarts();

const LOOSEN = `sed -i -e 's/check: "false"/check: "true"/' -e 's/max_iterations: 2/max_iterations: 0/' "$RALPH_RUN_DIR/state.md"`;

test("an agent turning its check to true and its cap to 0 mid-iteration gets neither; it is reported", async () => {
  const dir = project();
  const result = await runRalph(["run", "--name", "g", "-n", "2", "--check", "false", "go", ...agentAfter(LOOSEN)], dir);
  assert.equal(result.code, 3, result.stderr);
  const runDir = join(dir, ".ralph", "runs", "g");
  assert.deepEqual(completionMarker(runDir), ["completion_reason=MAX_ITERATIONS", "promise=COMPLETE"]);
  assert.equal(readStatus(runDir).iteration, 2);
  const state = readFileSync(join(runDir, "state.md"), "utf8");
  assert.match(state, /max_iterations: 2/);
  assert.match(state, /check: "false"/);
  // Known-false control: the agent's edit really happened and would have loosened both rules.
  const kept = readFileSync(join(runDir, "state.md.rejected-001"), "utf8");
  assert.match(kept, /check: "true"/);
  assert.match(kept, /max_iterations: 0/);
  const rejected = readEvents(runDir).filter((e) => e.type === "state_change_rejected");
  assert.equal(rejected.length, 2);
  assert.deepEqual(rejected[0]?.ignored, ["max_iterations 2 -> 0", "completion_criteria"]);
  assert.match(readFileSync(join(runDir, "run.log"), "utf8"), /state\.md was changed while iteration 1 ran; not applied: max_iterations 2 -> 0, completion_criteria/);
});

test("an agent's tightening mid-iteration (a lower cap) still applies", async () => {
  const dir = project();
  const lower = `sed -i 's/max_iterations: 5/max_iterations: 1/' "$RALPH_RUN_DIR/state.md"`;
  const result = await runRalph(["run", "--name", "t", "-n", "5", "go", ...agentAfter(lower)], dir);
  assert.equal(result.code, 3, result.stderr);
  const runDir = join(dir, ".ralph", "runs", "t");
  assert.equal(readStatus(runDir).iteration, 1);
  assert.equal(readStatus(runDir).max_iterations, 1);
});

test("a person's edit of state.md between iterations (while paused) applies in full", async () => {
  const dir = project();
  const gate = join(dir, "gate");
  const { done } = start(dir, ["run", "--name", "p", "-n", "3", "--check", "false", "go", ...agentAfter("true", "--wait-for", gate)]);
  await waitForFile(`${gate}.started`);
  const runDir = join(dir, ".ralph", "runs", "p");
  writeFileSync(join(runDir, "PAUSE"), "");
  writeFileSync(gate, "");
  await waitUntil(() => readStatus(runDir).state === "paused", "the run to pause");
  const stateFile = join(runDir, "state.md");
  writeFileSync(stateFile, readFileSync(stateFile, "utf8").replace('check: "false"', 'check: "true"'));
  unlinkSync(join(runDir, "PAUSE"));
  const result = await done;
  assert.equal(result.code, 0, result.stderr);
  assert.deepEqual(completionMarker(runDir), ["completion_reason=DONE", "promise=COMPLETE"]);
  assert.equal(readStatus(runDir).iteration, 2);
  assert.equal(readEvents(runDir).filter((e) => e.type === "state_change_rejected").length, 0);
});

test("ralph set works mid-iteration; from inside the agent it is refused, whatever its environment", async () => {
  const dir = project();
  const gate = join(dir, "gate");
  // The agent tries ralph set itself, with the run's variables stripped from its environment.
  const selfSet = `env -u RALPH_RUN_DIR -u RALPH_SUPERVISOR "${process.execPath}" "${RALPH}" set s check=true max_iterations=0 > "${dir}/self-set.out" 2>&1; echo $? >> "${dir}/self-set.out"`;
  const { done } = start(dir, ["run", "--name", "s", "-n", "3", "--check", "false", "go", ...agentAfter(selfSet, "--wait-for", gate)]);
  await waitForFile(`${gate}.started`);
  const runDir = join(dir, ".ralph", "runs", "s");
  // Refused by ralph set itself (its parent, the agent's shell, carries the run's marker), before any request is written.
  assert.match(readFileSync(join(dir, "self-set.out"), "utf8"), /ralph set is for people: it does not run inside the agent of a ralph run \(.+\)\n2\n$/);
  const inAgentEnv = await runRalph(["set", "s", "check=true"], dir, cleanEnv({ RALPH_RUN_DIR: runDir }));
  assert.equal(inAgentEnv.code, 2);
  assert.match(inAgentEnv.stderr, /ralph set is for people/);
  const bad = await runRalph(["set", "s", "max_iterations=1e1"], dir);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /^ralph: max_iterations=1e1: expected max_iterations=N, a whole number/);
  // Through a link to main.js, as an install made before the CLI's entry was main.cjs left it: still ralph.
  const link = join(dirname(dir), `${basename(dir)}-ralph`);
  symlinkSync(join(dirname(RALPH), "main.js"), link);
  const viaLink = spawn(process.execPath, [link, "set", "s", "max_iterations=4"], { cwd: dir, env: cleanEnv(), stdio: ["ignore", "pipe", "pipe"] });
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

test("a request the agent forges in another process's name (pid 1, its real start time) is refused", async () => {
  const dir = project();
  const forge = [
    `start=$(sed 's/.*) //' /proc/1/stat | cut -d' ' -f20)`,
    `printf '{"words":["max_iterations=5"],"pid":1,"pid_start":"%s"}\\n' "$start" > "$RALPH_RUN_DIR/requests/forged.tmp"`,
    `mv "$RALPH_RUN_DIR/requests/forged.tmp" "$RALPH_RUN_DIR/requests/set-1-abcdef.request.json"`,
    `while [ -e "$RALPH_RUN_DIR/requests/set-1-abcdef.request.json" ]; do sleep 0.05; done`,
  ].join("; ");
  const result = await finishWithin(start(dir, ["run", "--name", "f", "-n", "2", "go", ...agentAfter(`[ "$RALPH_ITERATION" = 1 ] && { ${forge}; }; true`)]), 30_000);
  assert.equal(result.code, 3, result.stderr);
  const runDir = join(dir, ".ralph", "runs", "f");
  assert.equal(readStatus(runDir).iteration, 2, "the forged max_iterations=5 was not applied");
  assert.equal(readStatus(runDir).max_iterations, 2);
});

test("a rejected change that cannot be kept (a directory planted in its place) ends the run FAILED with its marker", async () => {
  const dir = project();
  const plant = `mkdir "$RALPH_RUN_DIR/state.md.rejected-001"; sed -i 's/^max_iterations: .*/max_iterations: 9/' "$RALPH_RUN_DIR/state.md"`;
  const result = await finishWithin(start(dir, ["run", "--name", "d", "-n", "2", "go", ...agentAfter(plant)]), 30_000);
  assert.equal(result.code, 1, result.stderr);
  assert.doesNotMatch(result.stderr, /\n\s+at /, "no stack trace");
  const runDir = join(dir, ".ralph", "runs", "d");
  assert.deepEqual(completionMarker(runDir), ["completion_reason=FAILED", "promise=COMPLETE"]);
  assert.equal(readStatus(runDir).state, "ended");
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
