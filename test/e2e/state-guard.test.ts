// Desired state stays the person's: an agent's edit of state.md never loosens the rules; a person's does apply.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  agentAfter,
  finishWithin,
  completionMarker,
  readEvents,
  readStatus,
  runRalph,
  tempProjects,
  trackedStarts,
} from "../helpers/cli.js";
import { waitFor, waitForFile } from "../helpers/wait.js";

const project = tempProjects("ralph-guard-");
const start = trackedStarts();

const LOOSEN = `sed -i -e 's/check: "false"/check: "true"/' -e 's/max_iterations: 2/max_iterations: 0/' "$RALPH_RUN_DIR/state.md"`;

test("an agent turning its check to true and its cap to 0 mid-iteration gets neither; it is reported", async () => {
  const dir = project();
  const result = await runRalph(
    ["run", "--name", "g", "-n", "2", "--check", "false", "go", ...agentAfter(LOOSEN)],
    dir,
  );
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
  assert.match(
    readFileSync(join(runDir, "run.log"), "utf8"),
    /state\.md was changed while iteration 1 ran; not applied: max_iterations 2 -> 0, completion_criteria/,
  );
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
  const { done } = start(dir, [
    "run",
    "--name",
    "p",
    "-n",
    "3",
    "--check",
    "false",
    "go",
    ...agentAfter("true", "--wait-for", gate),
  ]);
  await waitForFile(`${gate}.started`);
  const runDir = join(dir, ".ralph", "runs", "p");
  writeFileSync(join(runDir, "PAUSE"), "");
  writeFileSync(gate, "");
  await waitFor(() => readStatus(runDir).state === "paused", "the run to pause");
  const stateFile = join(runDir, "state.md");
  writeFileSync(stateFile, readFileSync(stateFile, "utf8").replace('check: "false"', 'check: "true"'));
  unlinkSync(join(runDir, "PAUSE"));
  const result = await done;
  assert.equal(result.code, 0, result.stderr);
  assert.deepEqual(completionMarker(runDir), ["completion_reason=DONE", "promise=COMPLETE"]);
  assert.equal(readStatus(runDir).iteration, 2);
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
  const result = await finishWithin(
    start(dir, [
      "run",
      "--name",
      "f",
      "-n",
      "2",
      "go",
      ...agentAfter(`[ "$RALPH_ITERATION" = 1 ] && { ${forge}; }; true`),
    ]),
    30_000,
  );
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
