// The runner steps into its agent's cgroup to fork the agent there. An agent allocating at once while the
// runner is still inside must not have the kernel's OOM killer end the runner (the larger process) for the
// agent's memory cap, nor have the runner's threads count against the agent's pids cap: both are written
// once the runner has left.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { findOnPath } from "../../src/process/supervision.js";

const FIXTURE = fileURLToPath(new URL("../fixtures/fork-inside-cap.js", import.meta.url));
const skip =
  process.platform !== "linux"
    ? "Linux only"
    : findOnPath("perl") === null
      ? "no perl"
      : process.getuid?.() !== 0
        ? "needs root for cgroups"
        : false;

function forkInside(mode: "ralph" | "cap-first" | "over-before-cap" | "pids" | "pids-cap-first") {
  return spawnSync(process.execPath, [FIXTURE, mode], { encoding: "utf8", timeout: 60_000 });
}

describe("AgentCgroup.forkInside", { skip }, () => {
  test("an agent over its memory cap at once, while the runner is still inside, does not get the runner OOM-killed", (t) => {
    const result = forkInside("ralph");
    if (result.stdout.startsWith("unavailable")) return t.skip(result.stdout.trim());
    assert.equal(result.status, 0, result.stdout + result.stderr);
    assert.match(result.stdout, /^agent: 0 allocated\nsurvived\n$/);
  });

  test("an agent already past the cap when it is written is ended, and counted as the cap's", (t) => {
    const result = forkInside("over-before-cap");
    if (result.stdout.startsWith("unavailable")) return t.skip(result.stdout.trim());
    assert.equal(result.status, 0, result.stdout + result.stderr);
    assert.match(result.stdout, /^agent: SIGKILL; own cap reached: true; oom kills: [1-9]\d*\nsurvived\n$/);
  });

  test("known-false control: with the cap written before the fork, the kernel kills the runner", (t) => {
    const result = forkInside("cap-first");
    if (result.stdout.startsWith("unavailable")) return t.skip(result.stdout.trim());
    assert.equal(result.signal, "SIGKILL", result.stdout + result.stderr);
    assert.doesNotMatch(result.stdout, /survived/);
  });

  test("a pids cap smaller than the runner's thread count still lets the agent start, and is N once it has left", (t) => {
    const result = forkInside("pids");
    if (result.stdout.startsWith("unavailable")) return t.skip(result.stdout.trim());
    assert.match(result.stdout, /^agent: 0 started; pids\.max 2\nsurvived\n$/, result.stderr);
    // Known-false control: that cap written before the fork counts the runner's threads, and the fork fails.
    assert.match(forkInside("pids-cap-first").stdout, /^agent: EAGAIN ; pids\.max 2\n/);
  });
});
