// Ending a `--parallel` parent ends every child's agent tree: Ctrl-C on a terminal, SIGTERM, stop --now,
// and SIGKILL of the parent (its children are engines in its process: its guardian ends every tree). Each child runs a tree with
// setsid'd, double-forked and TERM-ignoring processes; 0 survivors is asserted by tag.
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { spawn as spawnPty } from "@lydell/node-pty";
import { RALPH, cleanEnv, completionMarker, readStatus, runRalph } from "../helpers/cli.js";
import { isolateGitConfig, storiesRepo } from "../helpers/git-repo.js";
import {
  agentCommand,
  identify,
  procRunning,
  runnerProc,
  stateOf,
  survivors,
  waitForJson,
  type Proc,
  type Ready,
  type Tag,
} from "../fixtures/e2e-harness.js";
import { waitFor, within } from "../helpers/wait.js";
import { cleanupAfterTests } from "../fixtures/e2e-cleanup.js";

after(isolateGitConfig());
const cleanup = cleanupAfterTests();

const env = () => cleanEnv({ GIT_CONFIG_GLOBAL: process.env.GIT_CONFIG_GLOBAL ?? "", GIT_CONFIG_NOSYSTEM: "1" });
/** A repository with three pending stories and an `agent/` directory, where each child's tree agent writes its files. */
function treeRepo(): { repo: string; tag: Tag } {
  return { repo: storiesRepo({ "agent/.keep": "" }), tag: cleanup.tag() };
}

const ARGS = (tag: Tag) => [
  "run",
  "--tasks",
  "prd.json",
  "--parallel",
  "2",
  "--name",
  "x",
  "-n",
  "0",
  "--grace",
  "2s",
  "work",
  ...agentCommand(tag, "agent", "--tree", "mixed"),
];
const runDir = (repo: string, id: string) => join(repo, ".ralph", "runs", id);

/** Waits until both children's agent trees are up; returns every runner and tree process seen (a known-true start). */
async function bothTreesUp(repo: string, tag: Tag): Promise<Proc[]> {
  const procs: Proc[] = [];
  for (const child of ["x-1", "x-2"]) {
    const ready = await waitForJson<Ready>(join(repo, ".ralph", "worktrees", child, "agent", "ready-1.json"), 30_000);
    procs.push(...ready.procs, cleanup.runner(runDir(repo, child)));
  }
  procs.push(cleanup.runner(runDir(repo, "x")));
  assert.ok(survivors(tag).length >= 2 * 5, "both trees are running before the parent is ended");
  assert.ok(procs.every(procRunning));
  return procs;
}

/** After the parent ended: no process of any tree, no child runner, each child INTERRUPTED or STOPPED, no task marked done. */
async function nothingLeft(repo: string, tag: Tag, procs: Proc[], childReason: string): Promise<void> {
  await waitFor(
    () => survivors(tag).length === 0 && !procs.some(procRunning),
    "every tree and runner to be gone",
    10_000,
  );
  for (const child of ["x-1", "x-2"]) assert.equal(readStatus(runDir(repo, child)).exit_reason, childReason);
  assert.doesNotMatch(readFileSync(join(repo, "prd.json"), "utf8"), /"passes": true/);
}

describe("ending a --parallel parent ends every child's tree", { concurrency: 1 }, () => {
  test("Ctrl-C on a terminal: the parent and its children end INTERRUPTED, the calling script stops, 0 survivors", async () => {
    const { repo, tag } = treeRepo();
    const pty = spawnPty("bash", ["-c", '"$0" "$@"; echo AFTER', process.execPath, RALPH, ...ARGS(tag)], {
      cwd: repo,
      env: env() as Record<string, string>,
      cols: 200,
      rows: 50,
      name: "xterm",
    });
    cleanup.pid(identify(pty.pid));
    let output = "";
    pty.onData((data) => (output += data));
    const exited = new Promise<{ exitCode: number; signal?: number }>((resolve) => pty.onExit(resolve));
    const procs = await bothTreesUp(repo, tag);
    pty.write("\x03");
    const exit = await within(exited, 20_000, "the terminal's shell to exit");
    assert.equal(exit.signal, 2, output);
    assert.doesNotMatch(output, /AFTER/);
    await nothingLeft(repo, tag, procs, "INTERRUPTED");
    assert.deepEqual(
      [readStatus(runDir(repo, "x")).exit_reason, readStatus(runDir(repo, "x")).exit_code],
      ["INTERRUPTED", 130],
    );
  });

  test("Ctrl-Z in an interactive shell stops every child's tree with the parent; fg continues them all", async () => {
    const { repo, tag } = treeRepo();
    const shell = spawnPty("bash", ["--norc", "--noprofile", "-i"], {
      cwd: repo,
      env: { ...(env() as Record<string, string>), PS1: "$ ", HISTFILE: "/dev/null" },
      cols: 200,
      rows: 50,
      name: "xterm",
    });
    cleanup.pid(identify(shell.pid));
    const words = [process.execPath, RALPH, ...ARGS(tag)].map((word) => `'${word.replace(/'/g, "'\\''")}'`);
    shell.write(`${words.join(" ")}\r`);
    const procs = await bothTreesUp(repo, tag);
    const parent = runnerProc(runDir(repo, "x"));
    const trees = procs.filter((proc) => proc.pid !== parent.pid);
    assert.ok(
      trees.every((proc) => stateOf(proc) !== "T"),
      "known-false control: nothing is stopped before Ctrl-Z",
    );
    shell.write("\x1a");
    await waitFor(() => stateOf(parent) === "T", "the parent to stop", 10_000);
    await waitFor(
      () => trees.every((proc) => stateOf(proc) === "T"),
      `every process of both trees to stop (${trees.map(stateOf).join("")})`,
      10_000,
    );
    shell.write("fg\r");
    await waitFor(
      () => stateOf(parent) !== "T" && trees.every((proc) => !["T", ""].includes(stateOf(proc))),
      "the parent and both trees to go on",
      10_000,
    );
    shell.write("\x03");
    await nothingLeft(repo, tag, procs, "INTERRUPTED");
    shell.write("exit\r");
  });

  test("SIGTERM to the parent alone: it passes it on, dies of it (143), 0 survivors", async () => {
    const { repo, tag } = treeRepo();
    const parent = cleanup.ralph(ARGS(tag), repo, env());
    const procs = await bothTreesUp(repo, tag);
    parent.child.kill("SIGTERM");
    const result = await within(parent.done, 20_000, "the parent to exit");
    assert.equal(result.signal, "SIGTERM", result.stdout + result.stderr);
    await nothingLeft(repo, tag, procs, "INTERRUPTED");
  });

  test("stop --now without RUN (the parent): every child ends STOPPED at once, then the parent (exit 0), 0 survivors", async () => {
    const { repo, tag } = treeRepo();
    const parent = cleanup.ralph(ARGS(tag), repo, env());
    const procs = await bothTreesUp(repo, tag);
    // Three runs are active, but the children stand behind their parent: RUN may be left out.
    const stop = await runRalph(["stop", "--now"], repo, env());
    assert.equal(stop.code, 0, stop.stderr);
    const result = await within(parent.done, 20_000, "the parent to exit");
    assert.equal(result.code, 0, result.stdout + result.stderr);
    assert.equal(readStatus(runDir(repo, "x")).exit_reason, "STOPPED");
    await nothingLeft(repo, tag, procs, "STOPPED");
  });

  test("SIGKILL of the parent: its guardian ends every child's tree (0 survivors within grace + 1 s) and marks the children INTERRUPTED", async () => {
    const { repo, tag } = treeRepo();
    const parent = cleanup.ralph(ARGS(tag), repo, env());
    const procs = await bothTreesUp(repo, tag);
    const killedAt = performance.now();
    parent.child.kill("SIGKILL");
    await parent.done;
    await waitFor(
      () => survivors(tag).length === 0 && !procs.some(procRunning),
      "every tree and runner to be gone",
      10_000,
    );
    assert.ok(performance.now() - killedAt < 2000 + 1000 + 1500, "gone within grace + 1 s (and scheduling slack)");
    // The parent and its children (engines in its process) could record nothing themselves: they were killed.
    // The guardian marked each child it was told of INTERRUPTED (its completion marker); the parent, as any
    // SIGKILLed run, is stale. It writes the marks once the trees are gone: wait for them (bounded).
    const marked = (id: string) => completionMarker(runDir(repo, id))[0] === "completion_reason=INTERRUPTED";
    await waitFor(() => marked("x-1") && marked("x-2"), "the guardian to mark the children", 10_000).catch(
      () => undefined,
    );
    for (const [id, state] of [
      ["x", "stale"],
      ["x-1", "INTERRUPTED"],
      ["x-2", "INTERRUPTED"],
    ] as const) {
      assert.equal(readStatus(runDir(repo, id)).exit_reason, null);
      const shown = JSON.parse((await runRalph(["status", "--json", id], repo, env())).stdout) as { state: string };
      assert.equal(shown.state, state, id);
    }
    assert.deepEqual(completionMarker(runDir(repo, "x-1")), ["completion_reason=INTERRUPTED", "promise=COMPLETE"]);
    assert.equal(runnerProc(runDir(repo, "x")).pid, parent.child.pid);
  });
});
