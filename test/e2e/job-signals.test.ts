// Signals beyond Ctrl-C: Ctrl-Z on a real terminal stops the agent tree with ralph (and `fg`
// continues both), SIGQUIT ends the run INTERRUPTED with exit 131, and SIGUSR1 opens no debugger port.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawn as spawnChild } from "node:child_process";
import { readFileSync, readdirSync, readlinkSync } from "node:fs";
import { join } from "node:path";
import { spawn, type IPty } from "@lydell/node-pty";
import { RALPH, cleanEnv, completionMarker, readEvents, readStatus } from "../helpers/cli.js";
import {
  agentCommand,
  identify,
  procRunning,
  stateOf,
  survivors,
  waitForJson,
  type Proc,
  type Ready,
} from "../fixtures/e2e-harness.js";
import { waitFor, within } from "../helpers/wait.js";
import { cleanupAfterTests } from "../fixtures/e2e-cleanup.js";

const cleanup = cleanupAfterTests();
const CTRL_Z = "\x1a";
const CTRL_C = "\x03";

/** Inodes of the sockets listening on 127.0.0.1:9229 (Node's inspector port). */
function inspectorListeners(): Set<string> {
  const found = new Set<string>();
  for (const table of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    let text: string;
    try {
      text = readFileSync(table, "utf8");
    } catch {
      continue;
    }
    for (const line of text.split("\n").slice(1)) {
      const fields = line.trim().split(/\s+/);
      if (fields[1]?.endsWith(":240D") && fields[3] === "0A" && fields[9]) found.add(fields[9]);
    }
  }
  return found;
}

/** Whether process `pid` holds a socket listening on the inspector port. */
function listensOnInspectorPort(pid: number): boolean {
  const listeners = inspectorListeners();
  let fds: string[];
  try {
    fds = readdirSync(`/proc/${pid}/fd`);
  } catch {
    return false;
  }
  return fds.some((fd) => {
    try {
      const match = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      return match?.[1] !== undefined && listeners.has(match[1]);
    } catch {
      return false;
    }
  });
}

/** An interactive bash on a fresh pseudo-terminal: job control (Ctrl-Z, fg) as a person has it. */
function interactiveShell(cwd: string): { pty: IPty; output: () => string; type: (line: string) => void } {
  const env = { ...(cleanEnv() as Record<string, string>), PS1: "$ ", HISTFILE: "/dev/null" };
  const pty = spawn("bash", ["--norc", "--noprofile", "-i"], { cwd, env, cols: 200, rows: 50, name: "xterm" });
  cleanup.pid(identify(pty.pid));
  let output = "";
  pty.onData((data) => (output += data));
  return { pty, output: () => output, type: (line) => pty.write(`${line}\r`) };
}

function quoted(words: string[]): string {
  return words.map((word) => `'${word.replace(/'/g, "'\\''")}'`).join(" ");
}

/** Ctrl-Z on the shell's terminal; resolves once ralph and every process of `tree` are stopped. */
async function stopBoth(shell: { pty: IPty }, runner: Proc, tree: Proc[]): Promise<void> {
  shell.pty.write(CTRL_Z);
  await waitFor(() => stateOf(runner) === "T", "ralph to stop", 10_000);
  await waitFor(
    () => tree.every((proc) => stateOf(proc) === "T"),
    `every agent process to stop (${tree.map(stateOf).join("")})`,
    10_000,
  );
}

describe("job control and other signals", () => {
  // Two runs, so that nothing races the iteration's --timeout but the one stop the second run needs: in one
  // run, the stop, fg and second stop all had to land within the 6 s from the iteration's start, which a
  // loaded machine did not always manage (the timeout then ended the tree between the stops).
  test("Ctrl-Z in an interactive shell stops the agent tree with ralph; fg continues both, each time", async () => {
    const { dir, files, runDir, tag } = cleanup.scenario();
    const shell = interactiveShell(dir);
    shell.type(
      quoted([
        process.execPath,
        RALPH,
        "run",
        "--name",
        "x",
        "-n",
        "1",
        "--grace",
        "1s",
        "go",
        ...agentCommand(tag, files, "--tree", "mixed"),
      ]),
    );
    const ready = await waitForJson<Ready>(join(files, "ready-1.json"), 20_000);
    const runner = cleanup.runner(runDir);
    const tree = ready.procs;
    assert.ok(tree.length >= 3, "a tree of several processes (some in their own sessions)");
    assert.ok(
      tree.every((proc) => stateOf(proc) !== "T"),
      "known-false control: nothing is stopped before Ctrl-Z",
    );
    for (const round of [1, 2]) {
      await stopBoth(shell, runner, tree);
      // `fg` sends SIGCONT to ralph's process group; the agent's groups hear of it only from ralph.
      shell.type("fg");
      await waitFor(
        () => stateOf(runner) !== "T" && tree.every((proc) => !["T", ""].includes(stateOf(proc))),
        `ralph and its agent tree to go on (round ${round})`,
        10_000,
      );
    }
    // Ctrl-C reaches ralph alone (the agent has process groups of its own), and ralph ends the whole tree.
    shell.pty.write(CTRL_C);
    await waitFor(() => !procRunning(runner), "ralph to end the run after Ctrl-C", 15_000);
    assert.deepEqual(survivors(tag), []);
    assert.equal(readEvents(runDir).at(-1)?.reason, "INTERRUPTED");
    shell.type('echo "ralph exit=$?"; exit');
    await waitFor(() => /ralph exit=\d+/.test(shell.output()), "the shell to report ralph's exit status", 10_000);
    assert.match(shell.output(), /ralph exit=130/);
  });

  test("Ctrl-Z past the iteration's --timeout: nothing runs meanwhile, and fg ends the timed-out iteration at once", async () => {
    const { dir, files, runDir, tag } = cleanup.scenario();
    const shell = interactiveShell(dir);
    shell.type(
      quoted([
        process.execPath,
        RALPH,
        "run",
        "--name",
        "x",
        "-n",
        "1",
        "--timeout",
        "6s",
        "--grace",
        "1s",
        "go",
        ...agentCommand(tag, files, "--tree", "mixed"),
      ]),
    );
    const ready = await waitForJson<Ready>(join(files, "ready-1.json"), 20_000);
    const startedAt = performance.now();
    const runner = cleanup.runner(runDir);
    const tree = ready.procs;
    await stopBoth(shell, runner, tree);
    // Stopped past the iteration's 6 s timeout: nothing can enforce it meanwhile, and nothing runs.
    await waitFor(() => performance.now() - startedAt > 6500, "the timeout to pass while stopped", 15_000);
    assert.equal(stateOf(runner), "T");
    assert.ok(
      tree.every((proc) => stateOf(proc) === "T"),
      "the tree stayed stopped",
    );
    assert.equal(
      readEvents(runDir).find((event) => event.type === "iteration_ended"),
      undefined,
      "the iteration did not end before the stop",
    );

    shell.type("fg");
    // Continued past its timeout, the iteration is ended at once: the whole tree goes.
    await waitFor(() => !procRunning(runner), "ralph to end the timed-out iteration and exit", 15_000);
    assert.deepEqual(survivors(tag), []);
    const ended = readEvents(runDir).find((event) => event.type === "iteration_ended");
    assert.equal(ended?.ended_by, "timeout", shell.output());
    shell.type('echo "ralph exit=$?"; exit');
    await waitFor(() => /ralph exit=\d+/.test(shell.output()), "the shell to report ralph's exit status", 10_000);
    assert.match(shell.output(), /ralph exit=3/);
  });

  test("SIGQUIT ends the run INTERRUPTED: marker, status, event, exit 131", async () => {
    const { dir, files, runDir, tag } = cleanup.scenario();
    const started = cleanup.ralph(
      ["run", "--name", "x", "-n", "0", "--grace", "2s", "go", ...agentCommand(tag, files, "--tree", "mixed")],
      dir,
    );
    const ready = await waitForJson<Ready>(join(files, "ready-1.json"), 20_000, started);
    started.child.kill("SIGQUIT");
    const exit = await within(started.done, 15_000, "ralph to exit after SIGQUIT");
    assert.equal(exit.code, 131, exit.stderr);
    assert.deepEqual(completionMarker(runDir), ["completion_reason=INTERRUPTED", "promise=COMPLETE"]);
    const status = readStatus(runDir);
    assert.deepEqual([status.exit_reason, status.exit_code], ["INTERRUPTED", 131]);
    assert.equal(readEvents(runDir).at(-1)?.reason, "INTERRUPTED");
    assert.deepEqual(ready.procs.filter(procRunning), []);
    assert.deepEqual(survivors(tag), []);
  });

  test("SIGUSR1 opens no inspector port in ralph (a plain node process does: known-false control)", async () => {
    // Before Node's start-up installs its handler, SIGUSR1 kills: signal the control once it is running.
    const control = spawnChild(process.execPath, ["-e", "console.log('ready'); setInterval(() => {}, 1000)"], {
      stdio: ["ignore", "pipe", "ignore"],
    });
    cleanup.pid(identify(control.pid as number));
    await within(new Promise((resolve) => control.stdout.once("data", resolve)), 10_000, "the control to start");
    const signalledAt = performance.now();
    control.kill("SIGUSR1");
    await waitFor(
      () => listensOnInspectorPort(control.pid as number),
      "a plain node process to open its inspector on SIGUSR1",
      10_000,
    );
    const opened = performance.now() - signalledAt;
    control.kill("SIGKILL");
    await waitFor(
      () => !listensOnInspectorPort(control.pid as number) && inspectorListeners().size === 0,
      "the control's port to close",
      5_000,
    );

    const { dir, files, runDir, tag } = cleanup.scenario();
    const started = cleanup.ralph(
      ["run", "--name", "x", "-n", "1", "--grace", "1s", "go", ...agentCommand(tag, files, "--tree", "mixed")],
      dir,
    );
    await waitForJson<Ready>(join(files, "ready-1.json"), 20_000, started);
    const runner = cleanup.runner(runDir);
    process.kill(runner.pid, "SIGUSR1");
    // Give the inspector ten times what it took the control (1 to 3 s) to show up.
    const deadline = performance.now() + Math.min(3000, Math.max(1000, 10 * opened));
    while (performance.now() < deadline) {
      assert.ok(!listensOnInspectorPort(runner.pid), "ralph listens on 9229 after SIGUSR1");
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    assert.ok(procRunning(runner), "ralph is still running (SIGUSR1 did not kill it)");
    started.child.kill("SIGTERM");
    const exit = await within(started.done, 15_000, "ralph to exit");
    assert.doesNotMatch(exit.stderr, /Debugger listening/);
    assert.deepEqual(survivors(tag), []);
  });
});
