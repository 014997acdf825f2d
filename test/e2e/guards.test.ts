// Guards on by default for unattended runs, each with a control that does not fire it and a switch to turn it off.
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { cleanEnv, readEvents, readStatus, runRalph } from "../helpers/cli.js";
import { isolateGitConfig, tempRepo } from "../helpers/git-repo.js";

after(isolateGitConfig());
const env = () => cleanEnv({ GIT_CONFIG_GLOBAL: process.env.GIT_CONFIG_GLOBAL ?? "", GIT_CONFIG_NOSYSTEM: "1" });
const runDir = (dir: string) => join(dir, ".ralph", "runs", "g");
const log = (dir: string) => readFileSync(join(runDir(dir), "run.log"), "utf8");
const guards = (dir: string) => readEvents(runDir(dir)).filter((e) => e.type === "guard_fired");
const iterations = (dir: string) => readEvents(runDir(dir)).filter((e) => e.type === "iteration_started").length;
/** A command agent that runs `script` with sh, its prompt on stdin. */
const agent = (script: string) => ["--", "sh", "-c", `cat >/dev/null; ${script}`];
const WRITES = agent('echo "$RALPH_ITERATION" > "step-$RALPH_ITERATION.txt"; echo wrote');

describe("no progress: STALLED after 3 iterations by default", () => {
  test("an agent that changes nothing ends STALLED at iteration 3, saying why, with a guard_fired event", async () => {
    const dir = tempRepo();
    const result = await runRalph(
      ["run", "--name", "g", "-n", "6", "work", ...agent("echo looked around")],
      dir,
      env(),
    );
    assert.equal(result.code, 1, result.stderr);
    assert.equal(readStatus(runDir(dir)).exit_reason, "STALLED");
    assert.equal(iterations(dir), 3);
    assert.match(
      log(dir),
      /guard stalled: 3 consecutive iterations without a change to the git tree, HEAD or task list; the run ends STALLED \(--stall-limit 3; 0 turns this guard off\)/,
    );
    assert.deepEqual(
      guards(dir).map((e) => e.guard),
      ["stalled"],
    );
  });

  test("at the default cap (3) and stall limit (3) the cap ends the run: MAX_ITERATIONS, exit 3, saying no progress was seen", async () => {
    const dir = tempRepo();
    const result = await runRalph(["run", "--name", "g", "hello", ...agent("echo looked around")], dir, env());
    assert.equal(result.code, 3, result.stderr);
    assert.equal(readStatus(runDir(dir)).exit_reason, "MAX_ITERATIONS");
    assert.match(
      result.stdout,
      /^MAX_ITERATIONS: reached max_iterations 3; no progress was seen in the last 3 iterations \(no change to the git tree, HEAD or task list\)$/m,
    );
    assert.equal(guards(dir).length, 0);
    assert.doesNotMatch(log(dir), /guard stalled/);
  });

  test("control: an agent that writes a file each iteration is not stalled; --stall-limit 0 turns the guard off", async () => {
    const dir = tempRepo();
    const moving = await runRalph(["run", "--name", "g", "-n", "4", "work", ...WRITES], dir, env());
    assert.equal(moving.code, 3, moving.stderr);
    assert.equal(readStatus(runDir(dir)).exit_reason, "MAX_ITERATIONS");
    const off = tempRepo();
    const idle = await runRalph(
      ["run", "--name", "g", "-n", "4", "--stall-limit", "0", "work", ...agent("echo looked around")],
      off,
      env(),
    );
    assert.equal(idle.code, 3, idle.stderr);
    assert.equal(guards(off).length, 0);
  });
});

describe("the same failure 3 times in a row: FAILED naming it", () => {
  test("a check failing with the same output three times ends FAILED at iteration 3, naming the check and its output", async () => {
    const dir = tempRepo();
    const check = "echo 'expected 2, got 3'; exit 1";
    const result = await runRalph(
      [
        "run",
        "--name",
        "g",
        "-n",
        "6",
        "--completion-promise",
        "DONE",
        "--check",
        check,
        "work",
        ...agent('echo "$RALPH_ITERATION" > "step-$RALPH_ITERATION.txt"; echo "<promise>DONE</promise>"'),
      ],
      dir,
      env(),
    );
    assert.equal(result.code, 1, result.stderr);
    const status = readStatus(runDir(dir));
    assert.equal(status.exit_reason, "FAILED");
    assert.equal(iterations(dir), 3);
    assert.match(
      String(readEvents(runDir(dir)).find((e) => e.type === "run_ended")?.detail),
      /^the same failure 3 times in a row: check `echo 'expected 2, got 3'; exit 1` exit 1 \(expected 2, got 3\)$/,
    );
    assert.deepEqual(
      guards(dir).map((e) => e.guard),
      ["same_failure"],
    );
  });

  test("control: a check whose output changes each iteration is not the same failure; --same-failure-limit 0 turns it off", async () => {
    const dir = tempRepo();
    const check = 'echo "$(ls step-*.txt | wc -l) steps, want 9"; exit 1';
    const promise = agent('echo "$RALPH_ITERATION" > "step-$RALPH_ITERATION.txt"; echo "<promise>DONE</promise>"');
    const changing = await runRalph(
      ["run", "--name", "g", "-n", "4", "--completion-promise", "DONE", "--check", check, "work", ...promise],
      dir,
      env(),
    );
    assert.equal(changing.code, 3, changing.stderr);
    assert.equal(guards(dir).length, 0);
    const off = tempRepo();
    const same = await runRalph(
      [
        "run",
        "--name",
        "g",
        "-n",
        "4",
        "--same-failure-limit",
        "0",
        "--completion-promise",
        "DONE",
        "--check",
        "exit 1",
        "work",
        ...promise,
      ],
      off,
      env(),
    );
    assert.equal(same.code, 3, same.stderr);
    assert.equal(guards(off).length, 0);
  });

  test("the same agent error three times ends FAILED naming it, before a higher --max-failures", async () => {
    const dir = tempRepo();
    const result = await runRalph(
      [
        "run",
        "--name",
        "g",
        "-n",
        "6",
        "--max-failures",
        "5",
        "work",
        ...agent("echo 'cannot reach the model' >&2; exit 1"),
      ],
      dir,
      env(),
    );
    assert.equal(result.code, 1, result.stderr);
    assert.equal(iterations(dir), 3);
    assert.match(String(readStatus(runDir(dir)).exit_reason), /^FAILED$/);
    assert.match(
      log(dir),
      /guard same_failure: the same failure 3 times in a row: the agent failed: exit 1 without a result/,
    );
  });
});
