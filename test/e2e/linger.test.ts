// Agents that print their final result and never exit are ended after --linger; the iteration counts by its result.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { completionMarker, fakeClaudeEnv, readEvents, runRalph, tempProjects } from "../helpers/cli.js";
import { waitFor } from "../helpers/wait.js";
import { isRunning } from "../fixtures/tree-harness.js";

const project = tempProjects("ralph-linger-");
const runDir = (dir: string) => join(dir, ".ralph", "runs", "c");

describe("lingering agents", () => {
  test("an agent still running after its result is ended with its child; the iteration counts by that result", async () => {
    const dir = project();
    const child = join(dir, "child.pid");
    const env = fakeClaudeEnv(dir, "--spawn-grandchild", child, "--promise", "DONE", "--linger");
    const result = await runRalph(
      ["run", "--name", "c", "-n", "3", "--linger", "1s", "--timeout", "15s", "--completion-promise", "DONE", "go"],
      dir,
      env,
    );
    assert.equal(result.code, 0, result.stderr);
    assert.deepEqual(completionMarker(runDir(dir)), ["completion_reason=DONE", "promise=COMPLETE"]);
    const events = readEvents(runDir(dir));
    const lingered = events.filter((e) => e.type === "agent_lingered");
    assert.deepEqual(
      lingered.map((e) => [e.iteration, e.agent, e.linger_ms]),
      [[1, "claude", 1000]],
    );
    const ended = events.find((e) => e.type === "iteration_ended");
    assert.equal(ended?.ended_by, "lingered");
    assert.equal(ended?.result, "done");
    assert.equal(ended?.promise, "found");
    assert.match(
      readFileSync(join(runDir(dir), "run.log"), "utf8"),
      /still running 1s after its final result; ending it/,
    );
    const pid = Number(readFileSync(child, "utf8"));
    await waitFor(() => !isRunning(pid), `the agent's child ${pid} to be gone`, 5000);
  });

  test("control: an agent that has printed no result is not ended by --linger (only by its timeout)", async () => {
    const dir = project();
    const env = fakeClaudeEnv(dir, "--hang");
    const result = await runRalph(
      ["run", "--name", "c", "-n", "1", "--linger", "1s", "--timeout", "4s", "go"],
      dir,
      env,
    );
    assert.equal(result.code, 3, result.stderr);
    const events = readEvents(runDir(dir));
    assert.equal(events.filter((e) => e.type === "agent_lingered").length, 0);
    const ended = events.find((e) => e.type === "iteration_ended");
    assert.equal(ended?.ended_by, "timeout");
    assert.ok(Number(ended?.duration_ms) >= 3900, `ended after ${String(ended?.duration_ms)} ms`);
  });
});
