// The GitHub Actions action's loop step (deploy/github-actions/run-loop.mjs) with the built ralph as `ralph`:
// a job reports its run's spend as JSON (the `spend` output and spend.json in the run directory), in the same
// shape as `ralph spend --json` and the run_ended event, so the jobs of a matrix add up key by key.
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { RALPH, readEvents, spendAgentEnv } from "../helpers/cli.js";
import { isolateGitConfig, storiesRepo } from "../helpers/git-repo.js";

after(isolateGitConfig());

const RUN_LOOP = fileURLToPath(new URL("../../../deploy/github-actions/run-loop.mjs", import.meta.url));

/** The GITHUB_OUTPUT file's `key=value` lines. */
function outputsOf(file: string): Record<string, string> {
  return Object.fromEntries(
    readFileSync(file, "utf8")
      .trim()
      .split("\n")
      .map((line) => [line.slice(0, line.indexOf("=")), line.slice(line.indexOf("=") + 1)]),
  );
}

describe("GitHub Actions: a job's spend", () => {
  test("the loop step's spend output and spend.json hold the run's spend from the ledger, as the run_ended event does", () => {
    const repo = storiesRepo();
    const scratch = mkdtempSync(join(tmpdir(), "ralph-gha-spend-"));
    const bin = join(scratch, "bin");
    mkdirSync(bin);
    writeFileSync(join(bin, "ralph"), `#!/bin/sh\nexec '${process.execPath}' '${RALPH}' "$@"\n`, { mode: 0o755 });
    const output = join(scratch, "output");
    writeFileSync(output, "");
    const env = spendAgentEnv(repo, {
      XDG_STATE_HOME: join(scratch, "state"),
      PATH: `${bin}:${process.env.PATH ?? ""}`,
      GITHUB_OUTPUT: output,
      INPUT_TASKS: "prd.json",
      INPUT_TASK_INDEX: "0",
      INPUT_AGENT: "claude",
      INPUT_MAX_ITERATIONS: "3",
      INPUT_ARGS: "--stall-limit\n0\nwork",
    });
    const result = spawnSync(process.execPath, [RUN_LOOP], { cwd: repo, env, encoding: "utf8", timeout: 90_000 });
    assert.equal(result.status, 0, result.stdout + result.stderr);
    const outputs = outputsOf(output);
    assert.equal(outputs.exit_reason, "DONE", result.stdout + result.stderr);
    assert.equal(outputs.cost_usd, "0.01");
    const spend = JSON.parse(outputs.spend ?? "null") as Record<string, unknown>;
    const tokens = { input: 1000, output: 200, cache_read: 5000, cache_write: 300, total: 6500 };
    assert.deepEqual(spend, { run: outputs.run_id, cost_usd: 0.01, cost_source: "reported", calls: 1, tokens });
    assert.deepEqual(JSON.parse(readFileSync(join(outputs.run_dir ?? "", "spend.json"), "utf8")), spend);
    const ended = readEvents(outputs.run_dir ?? "").find((event) => event.type === "run_ended");
    assert.deepEqual(ended?.spend, { cost_usd: 0.01, cost_source: "reported", calls: 1, tokens });
  });
});
