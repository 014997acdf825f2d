// A real Ctrl-C: ralph runs in a shell script on a pseudo-terminal, and "\x03" is typed
// into it. The terminal sends SIGINT to the whole foreground job (the shell and ralph);
// the agent, in its own session without a terminal, hears of it only from ralph.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { completionMarker, readStatus } from "../helpers/cli.js";
import { inTerminal as startTerminal } from "../fixtures/terminal.js";
import { isRunning } from "../fixtures/tree-harness.js";
import {
  agentCommand,
  hasTerminal,
  identify,
  procRunning,
  survivors,
  until,
  waitForJson,
  type Ready,
} from "../fixtures/e2e-harness.js";
import { waitFor, within } from "../helpers/wait.js";
import { cleanupAfterTests } from "../fixtures/e2e-cleanup.js";

const cleanup = cleanupAfterTests();

/** `bash -c 'ralph ARGS; echo AFTER'` on a fresh pseudo-terminal, ended at cleanup. */
function inTerminal(cwd: string, ralphArgs: string[]) {
  const terminal = startTerminal(cwd, ralphArgs);
  cleanup.pid(identify(terminal.pty.pid));
  return terminal;
}

const SIGINT = 2;
const CTRL_C = "\x03";

describe("Ctrl-C on a terminal", { concurrency: 2 }, () => {
  for (const live of [false, true]) {
    test(`stops the loop, ends the agent tree and the calling script${live ? " (--live)" : ""}`, async () => {
      const { dir, files, runDir, tag } = cleanup.scenario();
      const args = [
        "run",
        "--name",
        "x",
        "-n",
        "0",
        "--grace",
        "3s",
        ...(live ? ["--live"] : []),
        "go",
        ...agentCommand(tag, files, "--tree", "mixed"),
      ];
      const terminal = inTerminal(dir, args);
      const ready = await waitForJson<Ready>(join(files, "ready-1.json"), 20_000, terminal);
      const runner = cleanup.runner(runDir);
      // The runner is on the terminal; the agent must not be (a raw-mode agent would swallow Ctrl-C).
      assert.ok(hasTerminal(runner.pid), "ralph runs on the pseudo-terminal");
      assert.ok(!hasTerminal(ready.agent), "the agent has no controlling terminal");

      terminal.pty.write(CTRL_C);
      const exit = await within(terminal.exited, 15_000, "the terminal's shell to exit");
      // ralph died of SIGINT, so bash stopped its script and died of SIGINT too.
      assert.equal(exit.signal, SIGINT, terminal.output());
      assert.doesNotMatch(terminal.output(), /AFTER/);
      assert.ok(!procRunning(runner), "ralph is gone");
      assert.deepEqual(ready.procs.filter(procRunning), []);
      assert.deepEqual(survivors(tag), []);
      const status = readStatus(runDir);
      assert.deepEqual([status.exit_reason, status.exit_code, status.iteration], ["INTERRUPTED", 130, 1]);
      assert.deepEqual(completionMarker(runDir), ["completion_reason=INTERRUPTED", "promise=COMPLETE"]);
      assert.match(terminal.output(), /INTERRUPTED/);
    });
  }

  test("a second Ctrl-C more than 0.5 s later skips a long grace and ends everything at once", async (t) => {
    const { dir, files, runDir, tag } = cleanup.scenario();
    const terminal = inTerminal(dir, [
      "run",
      "--name",
      "x",
      "-n",
      "0",
      "--grace",
      "30s",
      "go",
      ...agentCommand(tag, files, "--tree", "ignorer"),
    ]);
    const ready = await waitForJson<Ready>(join(files, "ready-1.json"), 20_000, terminal);
    const runner = cleanup.runner(runDir);
    const first = performance.now();
    terminal.pty.write(CTRL_C);
    // The agent and the fixture's root die of the polite SIGTERM; the ignorer waits out the grace.
    await waitFor(() => !isRunning(ready.agent) && !isRunning(ready.root), "the agent to end", 10_000);
    await until(first + 700);
    assert.ok(procRunning(runner), "ralph is still in the grace period");
    assert.ok(survivors(tag).length >= 1, "the TERM-ignorer is still running");

    const second = performance.now();
    terminal.pty.write(CTRL_C);
    const exit = await within(terminal.exited, 10_000, "the terminal's shell to exit");
    const latency = exit.at - second;
    t.diagnostic(`second Ctrl-C → the shell (and so ralph) gone in ${Math.round(latency)} ms (grace 30 s)`);
    assert.equal(exit.signal, SIGINT, terminal.output());
    assert.doesNotMatch(terminal.output(), /AFTER/);
    assert.ok(!procRunning(runner));
    assert.deepEqual(survivors(tag), []);
    // SPEC: gone within 1 s of the second Ctrl-C; slack for a loaded machine, still far below the 30 s grace.
    assert.ok(latency < 3000, `${Math.round(latency)} ms`);
    const status = readStatus(runDir);
    assert.deepEqual([status.exit_reason, status.exit_code], ["INTERRUPTED", 130]);
  });
});
