// Which run a command means: the latest started when none is named, none yet in a fresh project, run ids a
// person may give (--name), and a run directory that is a dangling link.
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readdirSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { assertOneLineUsageError, fakeAgent, runRalph, tempProjects } from "../helpers/cli.js";

const project = tempProjects("ralph-run-selection-");

test("status, logs and set with no runs at all say there are none yet", async () => {
  const dir = project();
  for (const args of [["status"], ["logs"], ["set", "max_iterations=4"]]) {
    assertOneLineUsageError(await runRalph(args, dir), /^ralph: no runs yet in \.ralph\/runs: .*ralph run/);
  }
});

test("the latest run is the most recently started, not the alphabetically last; list is in start order", async () => {
  const dir = project();
  await runRalph(["run", "--name", "zzz-first", "-n", "1", "go", ...fakeAgent()], dir);
  const second = await runRalph(["run", "-n", "1", "go", ...fakeAgent()], dir);
  assert.equal(second.code, 3);
  const newer = readdirSync(join(dir, ".ralph", "runs")).find((name) => name !== "zzz-first") as string;
  const status = JSON.parse((await runRalph(["status", "--json"], dir)).stdout) as { id: string };
  assert.equal(status.id, newer);
  const listed = JSON.parse((await runRalph(["list", "--json"], dir)).stdout) as { runs: Array<{ id: string }> };
  assert.deepEqual(
    listed.runs.map((run) => run.id),
    ["zzz-first", newer],
  );
});

test("a dangling run link is a usage error, not an internal error", async () => {
  const dir = project();
  mkdirSync(join(dir, ".ralph", "runs"), { recursive: true });
  symlinkSync(join(dir, "nowhere"), join(dir, ".ralph", "runs", "x"));
  assertOneLineUsageError(
    await runRalph(["run", "--name", "x", "-n", "1", "go", ...fakeAgent()], dir),
    /\.ralph\/runs\/x is a symbolic link/,
  );
  assertOneLineUsageError(await runRalph(["status", "x"], dir), /\.ralph\/runs\/x is a symbolic link/);
  assertOneLineUsageError(await runRalph(["continue", "x"], dir), /\.ralph\/runs\/x is a symbolic link/);
  const list = await runRalph(["list"], dir);
  assert.equal(list.code, 0, list.stderr);
  assert.equal(existsSync(join(dir, "nowhere")), false);
});

test("run ids starting with '-' are refused: --name -x and --name -V", async () => {
  const dir = project();
  for (const name of ["-x", "-V", "--help"]) {
    const result = await runRalph(["run", "--name", name, "-n", "1", "--dry-run", "go"], dir);
    assertOneLineUsageError(result, new RegExp(`^ralph: --name: expected a run id .*, got "${name}"`));
    assert.equal(result.stdout, "", `--name ${name} printed nothing (no version, no help)`);
  }
  assertOneLineUsageError(
    await runRalph(["run", "--name=-x", "-n", "1", "--dry-run", "go"], dir),
    /^ralph: --name: expected a run id/,
  );
  assert.equal(existsSync(join(dir, ".ralph")), false);
});
