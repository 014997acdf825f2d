// The subreaper launcher replaces one an agent has killed even while that one still reads as live: a killed
// process waiting to run its exit (here held so by a freezer) keeps a live state with SIGKILL pending.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import type { ChildProcess } from "node:child_process";
import { SubreaperLauncher } from "../../src/process/subreaper-launcher.js";
import { PRCTL_SYSCALL } from "../../src/process/pid1.js";
import { findOnPath } from "../../src/process/supervision.js";
import { readProcess } from "../../src/process/proc-table.js";
import { freeze, freezerMissing } from "../fixtures/freezer.js";
import { carriers } from "../fixtures/e2e-harness.js";
import { within } from "../helpers/wait.js";

const perl = findOnPath("perl");
const prctl = PRCTL_SYSCALL[process.arch];
const skip =
  perl === null ? "no perl" : prctl === undefined ? `no prctl number for ${process.arch}` : (freezerMissing() ?? false);

/** Starts `true` through the launcher and resolves with how it ended: its exit code, or the start's error. */
function runTrue(launcher: SubreaperLauncher): Promise<string> {
  const child: ChildProcess = launcher.start({
    argv: ["true"],
    cwd: "/",
    env: { PATH: process.env.PATH },
    withStdin: false,
  });
  child.stdout?.resume();
  child.stderr?.resume();
  (child.stdio[3] as NodeJS.ReadableStream | null)?.resume();
  return new Promise((resolve) => {
    child.once("error", (error: NodeJS.ErrnoException) => resolve(`error ${error.message}`));
    child.once("exit", (code: number | null, signal: string | null) => resolve(`exit ${code ?? signal}`));
  });
}

describe("SubreaperLauncher", { skip }, () => {
  test("a launcher SIGKILLed but not yet exited (state D, SIGKILL pending) is replaced at the next start", async (t) => {
    const entry = `RALPH_TEST_LAUNCHER=${randomBytes(6).toString("hex")}`;
    const launcher = new SubreaperLauncher(perl as string, prctl as number, {
      PATH: process.env.PATH,
      RALPH_TEST_LAUNCHER: entry.split("=")[1],
    });
    t.after(() => launcher.close());
    assert.equal(await within(runTrue(launcher), 10_000, "the first start"), "exit 0");
    const [first] = carriers("perl", entry);
    assert.ok(first !== undefined, "the launcher was found by its environment");
    const frozen = await freeze(first);
    t.after(() => frozen.thaw());
    process.kill(first, "SIGKILL");
    // Control: the killed launcher's state alone reads as a live one's, so a state check would send it the start.
    assert.equal(readProcess(first)?.state, "D");
    // Within less than the 10 s a start waits for an answer: a request sent to the dying launcher gets none.
    assert.equal(await within(runTrue(launcher), 5_000, "the start after the kill"), "exit 0");
    assert.deepEqual(carriers("perl", entry).filter((pid) => pid !== first).length, 1, "a new launcher served it");
  });
});
