// Run files that are not what they seem (FIFOs, links): the runner never blocks on them nor writes through them.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, lstatSync, mkdirSync, readFileSync, readdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  agentAfter,
  completionMarker,
  finishWithin,
  readStatus,
  runRalph,
  tempProjects,
  trackedStarts,
} from "../helpers/cli.js";
import { waitForFile } from "../helpers/wait.js";

const project = tempProjects("ralph-odd-");
const start = trackedStarts();

test("a FIFO in place of STOP is a stop request and never blocks the runner", async () => {
  const dir = project();
  const gate = join(dir, "gate");
  const run = start(dir, ["run", "--name", "f", "-n", "0", "go", ...agentAfter("true", "--wait-for", gate)]);
  await waitForFile(`${gate}.started`);
  execFileSync("mkfifo", [join(dir, ".ralph", "runs", "f", "STOP")]);
  writeFileSync(gate, "");
  const result = await finishWithin(run, 20_000);
  assert.equal(result.signal, null, "the runner did not hang on the FIFO");
  assert.equal(result.code, 0, result.stderr);
  assert.deepEqual(completionMarker(join(dir, ".ralph", "runs", "f")), [
    "completion_reason=STOPPED",
    "promise=COMPLETE",
  ]);
});

test("a FIFO put in place of state.md by the agent is refused, reported and replaced; the run goes on", async () => {
  const dir = project();
  const fifo = `rm -f "$RALPH_RUN_DIR/state.md" && mkfifo "$RALPH_RUN_DIR/state.md"`;
  const result = await finishWithin(start(dir, ["run", "--name", "s", "-n", "2", "go", ...agentAfter(fifo)]), 20_000);
  assert.equal(result.signal, null, "the runner did not hang on the FIFO");
  assert.equal(result.code, 3, result.stderr);
  const runDir = join(dir, ".ralph", "runs", "s");
  assert.equal(readStatus(runDir).iteration, 2);
  assert.ok(lstatSync(join(runDir, "state.md")).isFile());
  assert.match(readFileSync(join(runDir, "run.log"), "utf8"), /state\.md: is a FIFO, not a regular file/);
});

test("ralph stop and pause replace STOP/PAUSE links instead of writing through them", async () => {
  const dir = project();
  const gate = join(dir, "gate");
  const run = start(dir, ["run", "--name", "l", "-n", "0", "go", ...agentAfter("true", "--wait-for", gate)]);
  await waitForFile(`${gate}.started`);
  const runDir = join(dir, ".ralph", "runs", "l");
  const victims = ["pause-target", "stop-target"].map((name) => join(dir, name));
  for (const victim of victims) writeFileSync(victim, "precious\n");
  symlinkSync(victims[0] as string, join(runDir, "PAUSE"));
  symlinkSync(victims[1] as string, join(runDir, "STOP"));
  assert.equal((await runRalph(["pause", "l"], dir)).code, 0);
  assert.equal((await runRalph(["stop", "l"], dir)).code, 0);
  for (const victim of victims) assert.equal(readFileSync(victim, "utf8"), "precious\n");
  assert.ok(lstatSync(join(runDir, "STOP")).isFile());
  assert.ok(lstatSync(join(runDir, "PAUSE")).isFile());
  writeFileSync(gate, "");
  assert.equal((await finishWithin(run, 20_000)).code, 0);
});

test("planted iter-NNN.log and progress.txt links are refused by name, their targets untouched", async () => {
  for (const name of ["iter-002.log", "progress.txt"]) {
    const dir = project();
    const victim = join(dir, "victim");
    writeFileSync(victim, "precious\n");
    const plant = `rm -f "$RALPH_RUN_DIR/${name}"; ln -s "${victim}" "$RALPH_RUN_DIR/${name}"`;
    const result = await finishWithin(
      start(dir, ["run", "--name", "p", "-n", "3", "go", ...agentAfter(plant)]),
      20_000,
    );
    assert.equal(result.code, 1, result.stderr);
    assert.equal(readFileSync(victim, "utf8"), "precious\n", `${name}: the link's target was not written`);
    const runDir = join(dir, ".ralph", "runs", "p");
    assert.equal(readStatus(runDir).exit_reason, "FAILED");
    assert.match(String(readStatus(runDir).last_action), new RegExp(`${name.replace(".", "\\.")}: is a symbolic link`));
  }
});

test("a .ralph/runs link is not followed: run and list refuse it with exit 2", async () => {
  const dir = project();
  const elsewhere = join(dir, "elsewhere");
  mkdirSync(elsewhere);
  mkdirSync(join(dir, ".ralph"));
  symlinkSync(elsewhere, join(dir, ".ralph", "runs"));
  const run = await runRalph(["run", "-n", "1", "go", ...agentAfter("true")], dir);
  assert.equal(run.code, 2);
  assert.match(run.stderr, /^ralph: .*\.ralph\/runs is a symbolic link; ralph does not follow links/);
  assert.deepEqual(readdirSync(elsewhere), []);
  const list = await runRalph(["list"], dir);
  assert.equal(list.code, 2);
  assert.equal(existsSync(join(dir, ".ralph", "lock")), false, "nothing was left locked");
});
