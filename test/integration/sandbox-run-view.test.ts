// A sandboxed start while ralph replaces status.json: bubblewrap's set-up never fails on the run directory.
// Binding its files one by one (the known-false control, the command line this project used before) fails
// as soon as one is renamed over while bubblewrap binds it; the run's view (run-view.ts) is bound whole and
// nothing changes it while the sandbox lives. Real bubblewrap, real renames by another process.
import { once } from "node:events";
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spawnAgent } from "../../src/process/spawn-agent.js";
import { Sandbox } from "../../src/sandbox/sandbox.js";
import { NO_SANDBOX } from "../../src/sandbox/sandbox-policy.js";
import { probeSandbox } from "../../src/sandbox/sandbox-probe.js";
import { waitFor } from "../helpers/wait.js";

const probe = probeSandbox(process.env);

/** The views in a run directory. */
const views = (runDir: string) => readdirSync(runDir).filter((name) => name.startsWith(".sandbox-view-"));
const made: string[] = [];
const renamers: ChildProcess[] = [];
after(() => {
  for (const renamer of renamers) renamer.kill();
  made.forEach((dir) => rmSync(dir, { recursive: true, force: true }));
});

// Replaces status.json as ralph does (a file written beside it, renamed over it), as fast as it can.
const RENAMER = `const fs = require("node:fs");
const file = process.argv[1];
for (let i = 0; ; i++) { fs.writeFileSync(file + ".r.tmp", JSON.stringify({ i })); fs.renameSync(file + ".r.tmp", file); }`;

// What the sandboxed process checks: its run's status and progress are there, its settings are not.
const LOOK =
  'cat "$RALPH_RUN_DIR/status.json" > /dev/null && test -s "$RALPH_RUN_DIR/progress.txt" && test ! -e "$RALPH_RUN_DIR/settings.json"';

/** How up to `tries` sandboxed starts went (each with the command line `wrap` gives): how many failed, and the first failure's stderr. */
function start(
  wrap: () => { argv: string[]; env: NodeJS.ProcessEnv },
  cwd: string,
  tries: number,
  untilFailure: boolean,
) {
  let failed = 0;
  let first = "";
  let done = 0;
  for (; done < tries && !(untilFailure && failed > 0); done++) {
    const { argv, env } = wrap();
    const result = spawnSync(argv[0] as string, argv.slice(1), { cwd, env, encoding: "utf8", timeout: 20_000 });
    if (result.status !== 0) {
      failed += 1;
      first ||= `exit ${result.status}: ${result.stderr}`;
    }
  }
  return { failed, first, done };
}

/** A project whose run x has its status, progress and settings, and a sandbox for it. */
async function scene() {
  if (!probe.ok) throw new Error(probe.why);
  const work = realpathSync(mkdtempSync(join(tmpdir(), "ralph-run-view-")));
  made.push(work);
  const runDir = join(work, ".ralph", "runs", "x");
  mkdirSync(runDir, { recursive: true });
  writeFileSync(join(runDir, "status.json"), "{}");
  writeFileSync(join(runDir, "progress.txt"), "iteration 1\n");
  writeFileSync(join(runDir, "settings.json"), '{"webhooks":["https://hooks.example.com/secret"]}');
  const env: NodeJS.ProcessEnv = { ...process.env, RALPH_RUN_DIR: runDir, RALPH_RUN_ID: "x" };
  const sandbox = await Sandbox.open(
    probe,
    { ...NO_SANDBOX, mode: "on", network: { kind: "none" } },
    { agent: "command", env, projectDir: work, workDir: work },
  );
  return { work, runDir, env, sandbox };
}

describe(
  "the run directory in the sandbox while ralph replaces status.json",
  { skip: probe.ok ? false : `no sandbox here: ${probe.why}` },
  () => {
    test("every start sets up and sees the run's files; binding them one by one fails (known-false control)", async () => {
      const { work, runDir, env, sandbox } = await scene();
      const look = ["/bin/sh", "-c", LOOK];
      // The control: ralph's command line with the run's files bound one by one in place of the view.
      const oneByOne = () => {
        const wrapped = sandbox.wrap(look, env);
        const at = wrapped.argv.indexOf(wrapped.runView ?? "");
        assert.deepEqual(wrapped.argv.slice(at - 1, at + 2), ["--ro-bind", wrapped.runView, runDir]);
        const files = ["status.json", "progress.txt"].flatMap((name) => [
          "--ro-bind",
          join(runDir, name),
          join(runDir, name),
        ]);
        return {
          ...wrapped,
          argv: [...wrapped.argv.slice(0, at - 1), "--dir", runDir, ...files, ...wrapped.argv.slice(at + 2)],
        };
      };
      const withView = () => sandbox.wrap(look, env);
      // Quiet, both set up and see what they should.
      assert.equal(start(withView, work, 1, false).failed, 0);
      assert.equal(start(oneByOne, work, 1, false).failed, 0);

      renamers.push(spawn(process.execPath, ["-e", RENAMER, join(runDir, "status.json")], { stdio: "ignore" }));
      const control = start(oneByOne, work, 400, true);
      assert.equal(control.failed, 1, "400 starts binding the files one by one all set up: the renames never raced");
      assert.match(control.first, /bwrap: Can't bind mount .*status\.json/);
      // A view made for each start, as ralph makes them, while the renames go on: three times as many starts
      // as the control needed for its failure (at least 30, at most 120).
      const defended = start(withView, work, Math.min(120, Math.max(30, 3 * control.done)), false);
      assert.equal(defended.failed, 0, `${defended.failed} of ${defended.done} starts failed: ${defended.first}`);
      for (const renamer of renamers) renamer.kill();
      await Promise.all(
        renamers.map((renamer) =>
          renamer.exitCode === null && renamer.signalCode === null ? once(renamer, "exit") : null,
        ),
      );
      assert.equal(views(runDir).length, 2 + control.done + defended.done, "each start had a view of its own");
      await sandbox.close();
      assert.deepEqual(views(runDir), [], "close() removes the views it made");
    });

    test("a started process's view is removed once it has exited", async () => {
      const { work, runDir, env, sandbox } = await scene();
      let seen: string[] = [];
      const result = await sandbox.spawn(
        {
          argv: ["/bin/sh", "-c", 'cat "$RALPH_RUN_DIR/status.json"'],
          cwd: work,
          env,
          stdin: null,
          marker: { key: "RALPH_VIEW_TEST", value: "1" },
        },
        (options) => {
          seen = views(runDir);
          return spawnAgent(options);
        },
      );
      assert.ok(result.ok, result.ok ? "" : result.message);
      assert.equal(seen.length, 1, "its view, made before it starts");
      const exit = await result.agent.closed;
      assert.equal(exit.code, 0);
      await waitFor(() => views(runDir).length === 0, "the view removed after the exit", 5_000);
      await sandbox.close();
    });
  },
);
