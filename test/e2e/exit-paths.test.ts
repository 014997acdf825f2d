// Every exit path of the loop leaves completion_reason= and promise=COMPLETE as the last two lines of progress.txt.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  cleanEnv,
  completionMarker,
  fakeAgent,
  fakeClaudeEnv,
  readStatus,
  startRalph,
  tempProjects,
} from "../helpers/cli.js";
import { waitForFile } from "../helpers/wait.js";

const project = tempProjects("ralph-exit-");

interface ExitCase {
  reason: string;
  code: number | null;
  signal?: NodeJS.Signals;
  setup?: (dir: string) => NodeJS.ProcessEnv | void;
  args: (dir: string) => string[];
  /** For INTERRUPTED: what to do once the agent runs. */
  during?: (child: { kill(signal: NodeJS.Signals): boolean }, dir: string) => Promise<void>;
}

const CASES: ExitCase[] = [
  { reason: "DONE", code: 0, args: () => ["--completion-promise", "OK", "go", ...fakeAgent("--promise", "OK")] },
  {
    reason: "NO_WORK",
    code: 0,
    setup: (dir) => writeFileSync(join(dir, "TASKS.md"), "- [x] done already\n"),
    args: () => ["--tasks", "TASKS.md", "go", ...fakeAgent()],
  },
  {
    reason: "STOPPED",
    code: 0,
    args: (dir) => ["go", ...fakeAgent("--wait-for", join(dir, "gate"))],
    during: async (_child, dir) => {
      await waitForFile(join(dir, "gate.started"));
      writeFileSync(join(dir, ".ralph", "runs", "x", "STOP"), "");
      writeFileSync(join(dir, "gate"), "");
    },
  },
  { reason: "MAX_ITERATIONS", code: 3, args: () => ["-n", "1", "go", ...fakeAgent()] },
  { reason: "FAILED", code: 1, args: () => ["--max-failures", "1", "go", ...fakeAgent("--exit", "2")] },
  {
    reason: "INTERRUPTED",
    code: null,
    signal: "SIGTERM",
    args: (dir) => ["go", ...fakeAgent("--wait-for", join(dir, "gate"))],
    during: async (child, dir) => {
      await waitForFile(join(dir, "gate.started"));
      child.kill("SIGTERM");
    },
  },
  {
    reason: "BUDGET_EXCEEDED",
    code: 3,
    setup: (dir) => fakeClaudeEnv(dir),
    args: () => ["-n", "0", "--max-cost", "0.02", "go"],
  },
  {
    reason: "RUNTIME_EXCEEDED",
    code: 3,
    args: () => ["-n", "0", "--max-runtime", "1", "go", ...fakeAgent("--sleep", "300")],
  },
  {
    reason: "STALLED",
    code: 1,
    setup: (dir) => {
      execFileSync("git", ["init", "-q"], { cwd: dir });
      return cleanEnv();
    },
    args: () => ["-n", "0", "--stall-limit", "2", "go", ...fakeAgent()],
  },
];

describe("every exit path leaves the completion marker", () => {
  for (const exitCase of CASES) {
    test(exitCase.reason, async () => {
      const dir = project();
      const env = exitCase.setup?.(dir) ?? cleanEnv();
      const { child, done } = startRalph(["run", "--name", "x", ...exitCase.args(dir)], dir, env);
      const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
      await exitCase.during?.(child, dir);
      const result = await done;
      clearTimeout(timer);
      assert.equal(result.code, exitCase.code, result.stderr);
      assert.equal(result.signal, exitCase.signal ?? null);
      const runDir = join(dir, ".ralph", "runs", "x");
      assert.deepEqual(completionMarker(runDir), [`completion_reason=${exitCase.reason}`, "promise=COMPLETE"]);
      assert.equal(readStatus(runDir).exit_reason, exitCase.reason);
    });
  }
});
