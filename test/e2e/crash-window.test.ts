// A runner SIGKILLed at any moment of its start leaves its run either invisible or continuable.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, readdirSync, watch } from "node:fs";
import { join } from "node:path";
import { fakeAgent, runRalph, startRalph, tempProjects } from "../helpers/cli.js";

const project = tempProjects("ralph-crash-");

/** Starts a run and SIGKILLs it right after the `nth` change under .ralph; resolves once it is gone. */
async function killAfterNthChange(dir: string, nth: number): Promise<number> {
  mkdirSync(join(dir, ".ralph"));
  const run = startRalph(["run", "--name", "c", "-n", "1", "go", ...fakeAgent("--sleep", "2000")], dir);
  let seen = 0;
  const watcher = watch(join(dir, ".ralph"), { recursive: true }, () => {
    if (++seen === nth) run.child.kill("SIGKILL");
  });
  // Node 20's recursive watch on Linux rescans directories itself, and the runner renames its hidden
  // build directory away while that happens: a vanished directory is expected here, not a failure.
  watcher.on("error", () => undefined);
  const killer = setTimeout(() => run.child.kill("SIGKILL"), 20_000);
  await run.done;
  clearTimeout(killer);
  watcher.close();
  return seen;
}

test("SIGKILL after each step of creating a run: the run is absent, or listed and continuable", async () => {
  const outcomes: string[] = [];
  for (const nth of [1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 14, 17, 20, 24, 30]) {
    const dir = project();
    await killAfterNthChange(dir, nth);
    const listed = JSON.parse((await runRalph(["list", "--json"], dir)).stdout) as { runs: Array<{ id: string; state: string }> };
    const states = listed.runs.map((run) => `${run.id}:${run.state}`);
    assert.ok(states.length === 0 || (states.length === 1 && /^c:(stale|INTERRUPTED|MAX_ITERATIONS)$/.test(states[0] as string)), `after change ${nth}: ${states.join(", ")}`);
    const next = states.length === 0 ? await runRalph(["run", "--name", "c", "-n", "1", "go", ...fakeAgent()], dir) : await runRalph(["continue", "c", "-n", "2"], dir);
    assert.equal(next.code, 3, `after change ${nth} (${states.join(", ") || "absent"}): ${next.stderr}`);
    const leftovers = readdirSync(join(dir, ".ralph", "runs"));
    assert.deepEqual(leftovers, ["c"], `after change ${nth}: nothing but the run is left in .ralph/runs`);
    assert.deepEqual(readdirSync(join(dir, ".ralph", "runs", "c")).filter((name) => name.endsWith(".tmp")), []);
    outcomes.push(states.length === 0 ? "absent" : (states[0] as string));
  }
  // Known-false control: the kills landed both before and after the run became visible.
  assert.ok(outcomes.includes("absent"), outcomes.join(" "));
  assert.ok(outcomes.some((outcome) => outcome !== "absent"), outcomes.join(" "));
});
