// The guardian's run marks: a runner that dies leaves the runs it told its guardian of, and had not ended,
// marked INTERRUPTED (their completion marker), whether the Perl waiter or the Node guardian read the pipe,
// even after a marker the runner did not write; a run unmarked again, a run already INTERRUPTED, and every
// run after dispose() are left as they were.
import { describe, it, after } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { findOnPath } from "../../src/process/supervision.js";
import { FIXTURES, isRunning } from "../fixtures/tree-harness.js";
import { waitFor, waitForLine } from "../helpers/wait.js";

const root = mkdtempSync(join(tmpdir(), "ralph-guardian-marks-"));
const guardians: number[] = [];
after(() => {
  for (const pid of guardians) if (isRunning(pid)) process.kill(pid, "SIGKILL");
  rmSync(root, { recursive: true, force: true });
});

/** Starts the fixture runner in a fresh directory, ends it (SIGKILL) once its guardian is told, waits for the guardian to finish. */
async function runnerDies(mode: "kill" | "dispose", path: string): Promise<(name: string) => string> {
  const dir = mkdtempSync(join(root, "run-"));
  const child = spawn(process.execPath, [join(FIXTURES, "guardian-marks-runner.js"), dir, mode], {
    stdio: ["ignore", "pipe", "inherit"],
    env: { ...process.env, PATH: path },
  });
  const exited = new Promise((resolve) => child.once("exit", resolve));
  const ready = JSON.parse(await waitForLine(child.stdout, "READY ")) as { guardian: number };
  guardians.push(ready.guardian);
  child.kill("SIGKILL");
  await exited;
  await waitFor(() => !isRunning(ready.guardian), "the guardian to exit", 10_000);
  return (name) => readFileSync(join(dir, name, "progress.txt"), "utf8");
}

const paths: Array<[string, string]> = [["the Node guardian itself (no perl on PATH)", ""]];
if (findOnPath("perl")) paths.unshift(["the Perl waiter", process.env.PATH ?? ""]);

describe("guardian run marks", () => {
  for (const [who, path] of paths) {
    it(`${who}: the runner SIGKILLed, a run still marked is marked INTERRUPTED whatever its progress.txt ends with, the others are left alone`, async () => {
      const progress = await runnerDies("kill", path);
      assert.equal(progress("a"), "iteration=1\n\ncompletion_reason=INTERRUPTED\npromise=COMPLETE\n");
      assert.equal(progress("b"), "iteration=1\n\n", "unmarked again");
      assert.equal(
        progress("c"),
        "completion_reason=DONE\npromise=COMPLETE\ncompletion_reason=INTERRUPTED\npromise=COMPLETE\n",
        "a DONE marker its runner never recorded (it never unmarked the run)",
      );
      assert.equal(progress("d"), "completion_reason=INTERRUPTED\npromise=COMPLETE\n", "already INTERRUPTED");
    });

    it(`${who}: known-false control: after dispose() nothing is marked`, async () => {
      const progress = await runnerDies("dispose", path);
      assert.equal(progress("a"), "iteration=1\n\n");
      assert.equal(progress("c"), "completion_reason=DONE\npromise=COMPLETE\n");
    });
  }
});
