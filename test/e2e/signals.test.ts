// Signals through the built CLI: ralph ends the agent tree, records INTERRUPTED, and
// dies of the signal it got (so a calling shell sees 130/143/129 and stops its script).
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { RALPH, completionMarker, readEvents, readStatus } from "../helpers/cli.js";
import { isRunning } from "../fixtures/tree-harness.js";
import {
  agentCommand,
  iterationsStarted,
  progressBlocks,
  survivors,
  until,
  waitForJson,
  type Ready,
} from "../fixtures/e2e-harness.js";
import { waitFor, within } from "../helpers/wait.js";
import { cleanupAfterTests } from "../fixtures/e2e-cleanup.js";

const cleanup = cleanupAfterTests();

const SIGNALS = [
  ["SIGTERM", 143],
  ["SIGINT", 130],
  ["SIGHUP", 129],
] as const;

const MODES = [
  { name: "default", args: [] as string[] },
  { name: "--live", args: ["--live"] },
  { name: "--dry-run", args: ["--dry-run", "--dry-run-delay", "200ms"] },
];

/** What every interrupted run must have recorded. */
function assertInterrupted(runDir: string, exitCode: number): Record<string, unknown> {
  const status = readStatus(runDir);
  assert.equal(status.state, "ended");
  assert.equal(status.exit_reason, "INTERRUPTED");
  assert.equal(status.exit_code, exitCode);
  assert.deepEqual(completionMarker(runDir), ["completion_reason=INTERRUPTED", "promise=COMPLETE"]);
  const ended = readEvents(runDir).filter((event) => event.type === "run_ended");
  assert.equal(ended.length, 1);
  assert.equal(ended[0]?.reason, "INTERRUPTED");
  assert.equal(ended[0]?.exit_code, exitCode);
  return status;
}

describe(
  "a signal ends the run: INTERRUPTED recorded, agent tree gone, ralph dies of the signal",
  { concurrency: 3 },
  () => {
    for (const mode of MODES) {
      for (const [signal, exitCode] of SIGNALS) {
        test(`${signal} in ${mode.name} mode`, async () => {
          const { dir, files, runDir, tag } = cleanup.scenario();
          const dryRun = mode.name === "--dry-run";
          // Iteration 1 finishes normally; iteration 2 runs a process tree and hangs.
          const args = [
            "run",
            "--name",
            "x",
            "-n",
            "0",
            "--grace",
            "3s",
            ...mode.args,
            "go",
            ...agentCommand(tag, files, "--tree", "wrapper", "--tree-from", "2"),
          ];
          const ralph = cleanup.ralph(args, dir);
          let ready: Ready | null = null;
          if (dryRun) await waitFor(() => iterationsStarted(runDir) >= 2, "iteration 2 of the dry run", 20_000);
          else ready = await waitForJson<Ready>(join(files, "ready-2.json"), 20_000, ralph);
          if (ready) assert.equal(survivors(tag).length, ready.procs.length, "the agent tree runs before the signal");

          ralph.child.kill(signal);
          const result = await within(ralph.done, 15_000, "ralph's exit");
          assert.deepEqual([result.code, result.signal], [null, signal], result.stderr);
          // The tree was ended before ralph died, not by anyone afterwards.
          assert.deepEqual(survivors(tag), []);

          const status = assertInterrupted(runDir, exitCode);
          // The counters of the finished and of the interrupted iteration are kept.
          assert.equal(status.calls, status.iteration);
          const blocks = progressBlocks(runDir);
          if (dryRun) {
            assert.ok(Number(status.iteration) >= 2, `iteration ${String(status.iteration)}`);
            assert.match(readFileSync(join(runDir, "run.log"), "utf8"), /dry run: would run/);
          } else {
            assert.equal(status.iteration, 2);
            assert.equal(blocks[0]?.result, "continue");
            assert.equal(blocks[1]?.ended_by, "interrupted");
          }
          assert.equal(blocks.length, Number(status.iteration));
        });
      }
    }
  },
);

describe("a calling shell sees the signal", { concurrency: 2 }, () => {
  for (const [signal, exitCode] of SIGNALS) {
    test(`bash -c 'ralph …; echo "status $?"' prints status ${exitCode} after ${signal}`, async () => {
      const { dir, files, runDir, tag } = cleanup.scenario();
      const ralphArgs = [
        "run",
        "--name",
        "x",
        "-n",
        "0",
        "--grace",
        "3s",
        "go",
        ...agentCommand(tag, files, "--tree", "wrapper"),
      ];
      const bash = cleanup.process(
        "bash",
        ["-c", '"$0" "$@"; echo "status $?"', process.execPath, RALPH, ...ralphArgs],
        { cwd: dir, detached: true },
      );
      await waitForJson<Ready>(join(files, "ready-1.json"), 20_000, bash);
      const runner = cleanup.runner(runDir);
      process.kill(runner.pid, signal);
      const result = await within(bash.done, 15_000, "the shell's exit");
      assert.match(result.stdout, new RegExp(`^status ${exitCode}$`, "m"), result.stdout + result.stderr);
      assert.deepEqual(survivors(tag), []);
      assertInterrupted(runDir, exitCode);
    });
  }

  test("SIGINT to the whole foreground job (as Ctrl-C sends it) stops the calling script: no AFTER", async () => {
    const { dir, files, runDir, tag } = cleanup.scenario();
    const ralphArgs = [
      "run",
      "--name",
      "x",
      "-n",
      "0",
      "--grace",
      "3s",
      "go",
      ...agentCommand(tag, files, "--tree", "wrapper"),
    ];
    // Its own process group, like a terminal's foreground job: bash and ralph both get the SIGINT.
    const bash = cleanup.process("bash", ["-c", '"$0" "$@"; echo AFTER', process.execPath, RALPH, ...ralphArgs], {
      cwd: dir,
      detached: true,
    });
    await waitForJson<Ready>(join(files, "ready-1.json"), 20_000, bash);
    cleanup.runner(runDir);
    process.kill(-(bash.child.pid as number), "SIGINT");
    const result = await within(bash.done, 15_000, "the shell's exit");
    // bash saw its child die of SIGINT, so it stopped the script and died of SIGINT itself.
    assert.doesNotMatch(result.stdout, /AFTER/);
    assert.deepEqual([result.code, result.signal], [null, "SIGINT"]);
    assert.deepEqual(survivors(tag), []);
    assertInterrupted(runDir, 130);
  });
});

describe("repeated signals", () => {
  test("a repeat within 0.5 s is one signal; a later one skips a long grace and ends everything at once", async (t) => {
    const { dir, files, runDir, tag } = cleanup.scenario();
    // The tree holds a TERM-ignorer: with a 300 s grace only a second signal can end it within the wait below.
    const ralph = cleanup.ralph(
      ["run", "--name", "x", "-n", "0", "--grace", "300s", "go", ...agentCommand(tag, files, "--tree", "ignorer")],
      dir,
    );
    const ready = await waitForJson<Ready>(join(files, "ready-1.json"), 20_000, ralph);
    const first = performance.now();
    ralph.child.kill("SIGTERM");
    // Like GNU timeout (child, then group): a repeat right away must neither kill ralph nor skip the grace.
    ralph.child.kill("SIGTERM");
    // The polite signal reached the tree: the agent and the fixture's root die of it, the ignorer does not.
    await waitFor(() => !isRunning(ready.agent) && !isRunning(ready.root), "the agent to die of SIGTERM", 10_000);
    await until(first + 700);
    assert.equal(ralph.child.exitCode, null, "ralph is still ending the tree");
    assert.equal(ralph.child.signalCode, null, "the repeat did not kill ralph");
    assert.ok(survivors(tag).length >= 1, "the TERM-ignorer is still waiting out the grace");

    const second = performance.now();
    ralph.child.kill("SIGTERM");
    const result = await within(ralph.done, 10_000, "ralph's exit after the second signal");
    const latency = result.exitedAt - second;
    t.diagnostic(`second SIGTERM → ralph gone in ${Math.round(latency)} ms (grace 300 s)`);
    // Gone within the 10 s wait, 290 s before the grace would end: the second signal skipped it. How fast
    // (SPEC: within 1 s) is a figure for the bench, not a bound for a test on a shared machine.
    assert.deepEqual([result.code, result.signal], [null, "SIGTERM"]);
    assert.deepEqual(survivors(tag), []);
    assertInterrupted(runDir, 143);
  });
});

describe("stop latency", () => {
  test("SIGTERM → ralph gone with every process of a 200-process agent tree gone", async (t) => {
    const exits: number[] = [];
    for (let run = 0; run < 3; run++) {
      const { dir, files, runDir, tag } = cleanup.scenario();
      const ralph = cleanup.ralph(
        ["run", "--name", "x", "-n", "1", "--grace", "5s", "go", ...agentCommand(tag, files, "--tree", "big")],
        dir,
      );
      const ready = await waitForJson<Ready>(join(files, "ready-1.json"), 60_000, ralph);
      assert.ok(ready.procs.length >= 203, `${ready.procs.length} processes`);
      const sent = performance.now();
      ralph.child.kill("SIGTERM");
      const result = await within(ralph.done, 15_000, "ralph's exit");
      assert.deepEqual([result.code, result.signal], [null, "SIGTERM"]);
      // Every descendant is gone by the time ralph has exited.
      assert.deepEqual(survivors(tag), []);
      assertInterrupted(runDir, 143);
      exits.push(result.exitedAt - sent);
    }
    const sorted = [...exits].sort((a, b) => a - b);
    t.diagnostic(
      `203-process tree: signal → ralph exited, tree gone: ${exits.map(Math.round).join(", ")} ms (median ${Math.round(sorted[1] ?? 0)} ms)`,
    );
  });
});
