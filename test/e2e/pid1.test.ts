// ralph as PID 1 of a container (a new PID namespace made with `unshare`): signals end it
// with 128+n, and orphans that reparent to it are reaped instead of staying zombies.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, readdirSync, symlinkSync } from "node:fs";
import { delimiter, join } from "node:path";
import { RALPH, cleanEnv, completionMarker, readStatus } from "../helpers/cli.js";
import { E2E_AGENT, agentCommand, survivors, waitForJson, type Ready } from "../fixtures/e2e-harness.js";
import { waitFor, within } from "../helpers/wait.js";
import { cleanupAfterTests } from "../fixtures/e2e-cleanup.js";

const cleanup = cleanupAfterTests();

/** A program's path from PATH, or null. */
function which(name: string): string | null {
  for (const dir of (process.env.PATH ?? "").split(delimiter)) {
    if (dir !== "" && existsSync(join(dir, name))) return join(dir, name);
  }
  return null;
}

const UNSHARE = which("unshare");
const canUnshare =
  UNSHARE !== null && spawnSync(UNSHARE, ["--pid", "--fork", "--kill-child", "--mount-proc", "true"]).status === 0;
const hasPerl = which("perl") !== null;
const skip = !canUnshare ? "needs unshare --pid (root)" : !hasPerl ? "needs perl" : false;

/** Runs `argv` as PID 1 of a new PID namespace; killing unshare (at cleanup) kills the whole namespace. */
function asPid1(argv: string[], cwd: string, env?: NodeJS.ProcessEnv) {
  return cleanup.process(UNSHARE as string, ["--pid", "--fork", "--kill-child", "--mount-proc", ...argv], {
    cwd,
    ...(env ? { env } : {}),
  });
}

/** The host pid of the namespace's PID 1: unshare's only child. */
async function initPid(unsharePid: number): Promise<number> {
  let pid = 0;
  await waitFor(() => (pid = childrenOf(unsharePid)[0] ?? 0) > 0, "the namespace's PID 1", 10_000);
  return pid;
}

/** Children of every thread of a process (an orphan is adopted by any live thread of its reaper). */
function childrenOf(pid: number): number[] {
  const children: number[] = [];
  let tasks: string[];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return children;
  }
  for (const task of tasks) {
    try {
      children.push(
        ...readFileSync(`/proc/${pid}/task/${task}/children`, "utf8").trim().split(/\s+/).filter(Boolean).map(Number),
      );
    } catch {
      // the thread ended
    }
  }
  return children;
}

function stateOf(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "latin1");
    return stat.charAt(stat.lastIndexOf(")") + 2);
  } catch {
    return null;
  }
}

/** Samples the namespace's process tree from the host every 20 ms and remembers how long any zombie lasted. */
function watchZombies(init: number): { stop(): { longestMs: number; samples: number } } {
  const firstSeen = new Map<number, number>();
  let longestMs = 0;
  let samples = 0;
  const sample = (): void => {
    samples++;
    const now = performance.now();
    const zombies = new Set<number>();
    const queue = [init];
    for (let pid = queue.shift(); pid !== undefined; pid = queue.shift()) {
      for (const child of childrenOf(pid)) {
        if (stateOf(child) === "Z") zombies.add(child);
        else queue.push(child);
      }
    }
    for (const pid of firstSeen.keys()) if (!zombies.has(pid)) firstSeen.delete(pid);
    for (const pid of zombies) {
      const since = firstSeen.get(pid) ?? now;
      firstSeen.set(pid, since);
      longestMs = Math.max(longestMs, now - since);
    }
  };
  const timer = setInterval(sample, 20);
  return {
    stop() {
      clearInterval(timer);
      return { longestMs, samples };
    },
  };
}

interface Orphan {
  pid: number;
  adoptedBy: number;
  reaped: boolean;
  lastState: string | null;
}

describe("PID 1 of a container", { skip }, () => {
  test("control: a Node process as PID 1 leaves a dead orphan as a zombie", async () => {
    const { dir, files } = cleanup.project();
    const agent = asPid1([process.execPath, E2E_AGENT, "--dir", files, "--orphan"], dir);
    const result = await within(agent.done, 15_000, "the agent's exit");
    assert.equal(result.code, 0, result.stderr);
    const orphan = await waitForJson<Orphan>(join(files, "orphan-1.json"), 1000);
    assert.equal(orphan.adoptedBy, 1);
    assert.deepEqual([orphan.reaped, orphan.lastState], [false, "Z"]);
  });

  for (const [signal, exitCode] of [
    ["SIGTERM", 143],
    ["SIGINT", 130],
  ] as const) {
    test(`ralph as PID 1 reaps orphans and exits ${exitCode} on ${signal}`, async (t) => {
      const { dir, files, runDir } = cleanup.project();
      const tag = cleanup.tag();
      // Iteration 1 leaves an orphan that exits, and a server in its own session that ralph ends
      // after the agent exits; iteration 2 checks that the killed server was reaped, then hangs in a tree.
      const args = [
        "run",
        "--name",
        "x",
        "-n",
        "0",
        "--grace",
        "2s",
        "go",
        ...agentCommand(
          tag,
          files,
          "--probe-reaped",
          "--orphan",
          "--leave-server",
          "--tree",
          "daemon",
          "--tree-from",
          "2",
        ),
      ];
      const unshare = asPid1([process.execPath, RALPH, ...args], dir);
      const init = await initPid(unshare.child.pid as number);
      const zombies = watchZombies(init);
      try {
        const orphan = await waitForJson<Orphan>(join(files, "orphan-1.json"), 20_000, unshare);
        assert.notEqual(orphan.adoptedBy, 1, "the orphan went to the reaper, not to PID 1");
        assert.deepEqual([orphan.reaped, orphan.lastState], [true, null]);
        await waitForJson<Ready>(join(files, "ready-2.json"), 20_000, unshare);
        const reaped = await waitForJson<{ checked: number; unreaped: unknown[] }>(join(files, "reaped-2.json"), 1000);
        assert.deepEqual(reaped, { checked: 1, unreaped: [] }, "the server ended after iteration 1 was reaped");
        assert.ok(survivors(tag).length >= 4, "iteration 2's tree runs");

        process.kill(init, signal);
        const result = await within(unshare.done, 15_000, "the namespace's exit");
        assert.equal(result.code, exitCode, result.stderr);
        assert.doesNotMatch(result.stderr, /without a reaper/);
      } finally {
        const seen = zombies.stop();
        t.diagnostic(
          `longest-lived zombie in the namespace: ${Math.round(seen.longestMs)} ms over ${seen.samples} samples`,
        );
        assert.ok(seen.longestMs < 500, `a zombie lasted ${Math.round(seen.longestMs)} ms`);
      }
      const status = readStatus(runDir);
      assert.deepEqual([status.exit_reason, status.exit_code, status.iteration], ["INTERRUPTED", exitCode, 2]);
      assert.deepEqual(completionMarker(runDir), ["completion_reason=INTERRUPTED", "promise=COMPLETE"]);
      assert.deepEqual(survivors(tag), []);
    });
  }

  test("without perl it says so on stderr and still exits 143 on SIGTERM", async () => {
    const { dir, files, runDir } = cleanup.project();
    const tag = cleanup.tag();
    // A PATH with what the agent needs, but no perl.
    for (const name of ["env", "sh", "sleep"]) symlinkSync(which(name) as string, join(files, name));
    const env = cleanEnv({ PATH: files });
    // Without perl there is no subreaper: the default mode (a cgroup, else parentage) is what this is about.
    delete env.RALPH_SUPERVISION;
    const args = [
      "run",
      "--name",
      "x",
      "-n",
      "0",
      "--grace",
      "2s",
      "go",
      ...agentCommand(tag, files, "--tree", "wrapper"),
    ];
    const unshare = asPid1([process.execPath, RALPH, ...args], dir, env);
    const init = await initPid(unshare.child.pid as number);
    await waitForJson<Ready>(join(files, "ready-1.json"), 20_000, unshare);
    process.kill(init, "SIGTERM");
    const result = await within(unshare.done, 15_000, "the namespace's exit");
    assert.equal(result.code, 143, result.stderr);
    assert.match(result.stderr, /running as PID 1 without a reaper \(perl not found\)/);
    assert.equal(readStatus(runDir).exit_reason, "INTERRUPTED");
    assert.deepEqual(survivors(tag), []);
  });
});
