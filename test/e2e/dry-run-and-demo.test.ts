// Trying ralph out: a dry run says it is one everywhere, and the free demo neither charges nor litters.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { cleanEnv, fakeAgent, runRalph, tempProjects } from "../helpers/cli.js";

const project = tempProjects("ralph-trying-");

test("a dry run ends DRY_RUN (exit 0) with no progress lines, marked as one in list and status, with no advice to continue it", async () => {
  const dir = project();
  const result = await runRalph(
    ["run", "--dry-run", "--dry-run-delay", "0", "-n", "2", "--name", "d", "go", ...fakeAgent()],
    dir,
  );
  assert.equal(result.code, 0, result.stderr);
  assert.match(result.stdout, /^DRY_RUN: showed 2 iterations \(reached max_iterations 2\); no agent was started$/m);
  assert.doesNotMatch(result.stdout, /progress|MAX_ITERATIONS|\(dry run\)/);
  assert.match(
    result.stdout,
    /^next: that was a dry run: no agent was started; to run it for real, run the same command without --dry-run$/m,
  );
  assert.doesNotMatch(result.stdout, /ralph continue/);
  assert.match((await runRalph(["list"], dir)).stdout, /^d {2,}DRY_RUN {2,}2\/2 /m);
  const status = await runRalph(["status", "d"], dir);
  assert.match(status.stdout, /^state {6}DRY_RUN \(exit code 0\) · the agent was never started$/m);
  assert.doesNotMatch(status.stdout, /ralph continue/);
  const json = JSON.parse((await runRalph(["list", "--json"], dir)).stdout) as {
    runs: Array<{ id: string; dry_run: boolean }>;
  };
  assert.deepEqual(
    json.runs.map((run) => [run.id, run.dry_run]),
    [["d", true]],
  );
  // Known-false control: a real run is not marked.
  await runRalph(["run", "-n", "1", "--name", "r", "go", ...fakeAgent()], dir);
  assert.match((await runRalph(["list"], dir)).stdout, /^r {2,}MAX_ITERATIONS {2,}\d/m);
});

test("a run whose PROMPT.md is still ralph init's template gets a warning; a written prompt does not", async () => {
  const dir = project();
  assert.equal((await runRalph(["init"], dir)).code, 0);
  const dry = await runRalph(["run", "--dry-run", "--dry-run-delay", "0", "-n", "1", ...fakeAgent()], dir);
  assert.match(
    dry.stderr,
    /^ralph: warning: the prompt is still ralph init's template \(PROMPT\.md\): write the task into it first/m,
  );
  const written = await runRalph(
    ["run", "--dry-run", "--dry-run-delay", "0", "-n", "1", "--name", "w", "fix the tests", ...fakeAgent()],
    dir,
  );
  assert.doesNotMatch(written.stderr, /template/);
});

test("ralph demo reports no pretend cost, names ralph (not node and a path), and removes its temporary project", async () => {
  const dir = project();
  const before = new Set(readdirSync(tmpdir()).filter((name) => name.startsWith("ralph-demo-")));
  const result = await runRalph(["demo"], dir, cleanEnv({ RALPH_DEMO_DELAY_MS: "0" }));
  assert.equal(result.code, 0, result.stderr);
  assert.match(result.stdout, /nothing spent \(the demo agent is free\)/);
  assert.doesNotMatch(result.stdout, /\$\d|agent CLI's estimate/);
  assert.doesNotMatch(result.stdout, /node \//);
  assert.match(result.stdout, /ralph demo --keep/);
  const made = /in (\/\S+ralph-demo-\w+)/.exec(result.stdout)?.[1] ?? "";
  assert.ok(made !== "" && !before.has(made.split("/").pop() ?? ""), result.stdout);
  assert.equal(existsSync(made), false, `${made} was removed`);
  // --keep keeps it and says how to look at it.
  const kept = await runRalph(["demo", "--keep"], dir, cleanEnv({ RALPH_DEMO_DELAY_MS: "0" }));
  const keptDir = /in (\/\S+ralph-demo-\w+)/.exec(kept.stdout)?.[1] ?? "";
  assert.match(kept.stdout, new RegExp(`^inspect the run: cd ${keptDir} && ralph status$`, "m"));
  assert.ok(existsSync(join(keptDir, "demo-output")));
  const status = await runRalph(["status"], keptDir);
  assert.match(status.stdout, /^state {6}DONE/m);
  // The demo's project is a git repository, as a real one is: stall detection is on and sees the progress.
  assert.doesNotMatch(kept.stdout, /stall detection needs git/);
  assert.match(kept.stdout, /^progress in iteration 1: /m);
  assert.equal(
    spawnSync("git", ["-C", keptDir, "log", "--format=%s"], { encoding: "utf8" }).stdout.trim(),
    "The demo project: three user stories",
  );
  rmSync(keptDir, { recursive: true, force: true });
});

test("the demo agent in a person's project marks its tasks and writes no demo-output/ there", async () => {
  const dir = project();
  writeFileSync(join(dir, "TASKS.md"), "- [ ] one\n- [ ] two\n");
  const result = await runRalph(
    ["run", "--agent", "demo", "--tasks", "TASKS.md", "-n", "3", "--name", "d", "go"],
    dir,
    cleanEnv({ RALPH_DEMO_DELAY_MS: "0" }),
  );
  assert.equal(result.code, 0, result.stderr + result.stdout);
  assert.equal(readFileSync(join(dir, "TASKS.md"), "utf8"), "- [x] one\n- [x] two\n");
  assert.equal(existsSync(join(dir, "demo-output")), false, "nothing written into the person's project");
  // Known-false control: in ralph demo's own project (what RALPH_DEMO_PROJECT says) it does write its files.
  const own = project();
  writeFileSync(join(own, "TASKS.md"), "- [ ] one\n");
  assert.equal(
    (
      await runRalph(
        ["run", "--agent", "demo", "--tasks", "TASKS.md", "-n", "2", "--name", "d", "go"],
        own,
        cleanEnv({ RALPH_DEMO_DELAY_MS: "0", RALPH_DEMO_PROJECT: "1" }),
      )
    ).code,
    0,
  );
  assert.equal(existsSync(join(own, "demo-output")), true);
});

test("the permission mode is stated at start; a permission mode in --agent-args replaces it; --dry-run shows the prompt", async () => {
  const dir = project();
  const plain = await runRalph(
    ["run", "--agent", "claude", "--dry-run", "--dry-run-delay", "0", "-n", "1", "line one\nline two"],
    dir,
  );
  assert.equal(plain.code, 0, plain.stderr);
  assert.match(
    plain.stdout,
    /^claude runs with --dangerously-skip-permissions: it edits files and runs commands without asking; to change that, pass --agent-args/m,
  );
  assert.match(plain.stdout, /dry run: would run \[.*"--dangerously-skip-permissions"/);
  assert.match(plain.stdout, /dry run: the prompt \(17 characters\):\n {2}\| line one\n {2}\| line two\n/);
  const chosen = await runRalph(
    [
      "run",
      "--agent",
      "claude",
      "--dry-run",
      "--dry-run-delay",
      "0",
      "-n",
      "1",
      "--agent-args",
      "--permission-mode acceptEdits",
      "go",
    ],
    dir,
  );
  assert.equal(chosen.code, 0, chosen.stderr);
  assert.match(
    chosen.stdout,
    /^claude runs with the permission mode from --agent-args: --permission-mode acceptEdits$/m,
  );
  assert.doesNotMatch(chosen.stdout, /dangerously-skip-permissions/);
});
