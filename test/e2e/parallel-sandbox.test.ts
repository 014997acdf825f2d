// `--parallel` with `--sandbox`: the children are engines in the parent's process, and each child's agent
// still runs in a sandbox of its own (its own PID namespace); the same run without --sandbox is the control.
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { cleanEnv, RALPH, runRalph } from "../helpers/cli.js";
import { isolateGitConfig, storiesRepo } from "../helpers/git-repo.js";

after(isolateGitConfig());

const env = () => cleanEnv({ GIT_CONFIG_GLOBAL: process.env.GIT_CONFIG_GLOBAL ?? "", GIT_CONFIG_NOSYSTEM: "1" });

/** Why a sandbox cannot be built here (from `ralph doctor --json`), or null. */
function sandboxMissing(): string | null {
  const result = spawnSync(process.execPath, [RALPH, "doctor", "--json"], {
    env: cleanEnv(),
    encoding: "utf8",
    timeout: 60_000,
  });
  const sandbox = (JSON.parse(result.stdout) as { sandbox?: { ok: boolean; why?: string } }).sandbox;
  return sandbox?.ok ? null : `no sandbox here: ${sandbox?.why ?? "doctor says nothing"}`;
}

// Kept in the repository, so that it is in every child's worktree (a sandbox hides the test's temporary files).
const AGENT = `const fs = require("fs"); let prompt = "";
process.stdin.on("data", (d) => (prompt += d)).on("end", () => {
  const id = /## Current task\\n\\n([^:\\n]+):/.exec(prompt)[1];
  const prd = JSON.parse(fs.readFileSync("prd.json", "utf8"));
  for (const story of prd.userStories) if (story.id === id) story.passes = true;
  fs.writeFileSync("prd.json", JSON.stringify(prd, null, 2) + "\\n");
  console.log("agent pid " + process.pid);
});
`;

/** The pids the children's agents saw themselves as, from their iteration logs. */
async function agentPids(sandboxed: boolean): Promise<number[]> {
  const repo = storiesRepo({ "agent.cjs": AGENT });
  const args = [
    "run",
    "--tasks",
    "prd.json",
    "--parallel",
    "2",
    "--name",
    "p",
    "--agent",
    "command",
    ...(sandboxed ? ["--sandbox"] : []),
    "work",
    "--",
    process.execPath,
    "agent.cjs",
  ];
  const result = await runRalph(args, repo, env());
  assert.equal(result.code, 0, result.stderr + result.stdout);
  return ["p-1", "p-2", "p-3"].map((child) => {
    const log = readFileSync(join(repo, ".ralph", "runs", child, "iter-001.log"), "utf8");
    return Number(/agent pid (\d+)/.exec(log)?.[1] ?? "NaN");
  });
}

describe(
  "--parallel --sandbox",
  { skip: process.platform !== "linux" ? "Linux only" : (sandboxMissing() ?? false) },
  () => {
    test("each in-process child's agent runs in a sandbox (a PID namespace of its own); without --sandbox it does not", async () => {
      const sandboxed = await agentPids(true);
      assert.ok(
        sandboxed.every((pid) => pid > 0 && pid < 100),
        `sandboxed agents see small pids: ${sandboxed.join(", ")}`,
      );
      // Known-false control: unsandboxed, the agents see the machine's own pids.
      const plain = await agentPids(false);
      assert.ok(
        plain.every((pid) => pid >= 100),
        `unsandboxed agents see the machine's pids: ${plain.join(", ")}`,
      );
    });
  },
);
