// A repository the sandboxed agent plants in the work tree (SPEC section 15, round 2) is found at the end
// of the iteration: the iteration fails with a sandbox_tamper event naming it, it is moved out of the work
// tree (so the person's git status never runs the fsmonitor it names), and `ralph report` lists it. The
// known-false control: the same agent unsandboxed leaves all three in place.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { cleanEnv, RALPH, readEvents } from "../helpers/cli.js";
import { within } from "../fixtures/e2e-harness.js";
import { cleanupAfterTests } from "../fixtures/e2e-cleanup.js";
import { probeSandbox } from "../../src/sandbox/sandbox-probe.js";

const cleanup = cleanupAfterTests();
const probe = probeSandbox(process.env);

// A nested repository whose config names an fsmonitor, a gitlink added to the index, and .git/commondir
// pointing git elsewhere (last: git inside follows it from then on).
const PLANT = `set -e
mkdir -p sub && git -C sub init -q && printf '[core]\\n\\tfsmonitor = touch PWNED\\n' >> sub/.git/config
git update-index --add --cacheinfo 160000,1111111111111111111111111111111111111111,linked
echo ../evil > .git/commondir
echo planted > planted.txt`;

async function plant(sandboxed: boolean) {
  const { dir, runDir } = cleanup.project("ralph-sandbox-tamper-");
  const git = spawnSync("git", ["init", "-q", dir], { encoding: "utf8" });
  assert.equal(git.status, 0, git.stderr);
  const ralph = cleanup.ralph(["run", "--name", "x", "-n", "1", "--agent", "command", "go", "--", "/bin/sh", "-c", PLANT], dir, cleanEnv({ RALPH_SANDBOX: sandboxed ? "on" : "off" }));
  const result = await within(ralph.done, 60_000, "ralph's exit");
  assert.ok(existsSync(join(dir, "planted.txt")), `the agent did not run:\n${result.stdout}${result.stderr}`);
  return { dir, runDir, result, events: readEvents(runDir) };
}

/** The index's gitlinks, read with git pointed at nothing the agent planted. */
function gitlinks(dir: string): string[] {
  const listed = spawnSync("git", ["-c", "core.fsmonitor=false", "ls-files", "-s"], { cwd: dir, encoding: "utf8" });
  return listed.stdout.split("\n").filter((line) => line.startsWith("160000"));
}

describe("a repository planted by the sandboxed agent", { concurrency: 2, skip: probe.ok ? false : `no sandbox here: ${probe.why}` }, () => {
  test("fails the iteration with sandbox_tamper, is moved out of the work tree, and ralph report lists it", async () => {
    const { dir, runDir, result, events } = await plant(true);
    const tamper = events.find((event) => event.type === "sandbox_tamper");
    assert.deepEqual(tamper?.paths, [".git/commondir", "sub/.git", "linked (a gitlink in the index)"], result.stdout);
    assert.equal(events.find((event) => event.type === "iteration_ended")?.result, "failed");
    assert.equal(existsSync(join(dir, "sub", ".git")), false);
    assert.equal(existsSync(join(dir, ".git", "commondir")), false);
    assert.deepEqual(gitlinks(dir), []);
    // The person's git status runs nothing the agent planted.
    spawnSync("git", ["status", "--short"], { cwd: dir, encoding: "utf8" });
    assert.equal(existsSync(join(dir, "PWNED")), false);
    assert.equal(existsSync(join(runDir, "planted")), true);
    const report = spawnSync(process.execPath, [RALPH, "report", "x"], { cwd: dir, env: cleanEnv(), encoding: "utf8", timeout: 30_000 });
    assert.match(report.stdout, /Planted by the agent[\s\S]*iteration 1: `\.git\/commondir`, `sub\/\.git`/);
  });

  test("control without the sandbox: all three stay where the agent put them", async () => {
    const { dir, events } = await plant(false);
    assert.equal(events.some((event) => event.type === "sandbox_tamper"), false);
    assert.equal(existsSync(join(dir, "sub", ".git")), true);
    assert.equal(existsSync(join(dir, ".git", "commondir")), true);
  });
});
