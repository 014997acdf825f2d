// --fallback-agent and --max-wait end to end: a long usage limit moves the iteration to the next agent; a short one is waited out.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { completionMarker, fakeClaudeEnv, progressLines, readEvents, runRalph, tempProjects } from "../helpers/cli.js";

const project = tempProjects("ralph-fallback-");
const runDir = (dir: string) => join(dir, ".ralph", "runs", "c");
const agentsStarted = (dir: string) =>
  readEvents(runDir(dir))
    .filter((e) => e.type === "iteration_started")
    .map((e) => [e.iteration, e.agent]);

describe("fallback agents", () => {
  test("a usage limit resetting later than --max-wait runs the iteration with the fallback at once", async () => {
    const dir = project();
    writeFileSync(join(dir, "TASKS.md"), "- [ ] write the greeting\n");
    const env = { ...fakeClaudeEnv(dir, "--limit-once", join(dir, "limited"), "600"), RALPH_DEMO_DELAY_MS: "0" };
    const result = await runRalph(
      ["run", "--name", "c", "-n", "3", "--tasks", "TASKS.md", "--fallback-agent", "demo", "--max-wait", "1m", "go"],
      dir,
      env,
    );
    assert.equal(result.code, 0, result.stderr);
    assert.deepEqual(completionMarker(runDir(dir)), ["completion_reason=NO_WORK", "promise=COMPLETE"]);
    assert.deepEqual(agentsStarted(dir), [
      [1, "claude"],
      [1, "demo"],
    ]);
    const events = readEvents(runDir(dir));
    assert.equal(events.filter((e) => e.type === "waiting_limit").length, 0);
    assert.deepEqual(
      events.filter((e) => e.type === "iteration_ended").map((e) => [e.agent, e.result]),
      [
        ["claude", "usage_limit"],
        ["demo", "continue"],
      ],
    );
    assert.deepEqual(
      progressLines(runDir(dir)).filter((line) => line.startsWith("agent=")),
      ["agent=claude", "agent=demo"],
    );
  });

  test("ralph logs --iteration reads a fallback's output with that agent's parser", async () => {
    const dir = project();
    const codex = join(dir, "fake-codex");
    const lines = [
      { type: "thread.started", thread_id: "t-1" },
      { type: "item.completed", item: { id: "i1", type: "agent_message", text: "hello from the fallback" } },
      { type: "turn.completed", usage: { input_tokens: 3, output_tokens: 2 } },
    ];
    writeFileSync(
      codex,
      `#!/bin/sh
cat >/dev/null
printf '%s\\n' ${lines.map((line) => `'${JSON.stringify(line)}'`).join(" ")}
`,
      { mode: 0o755 },
    );
    const env = { ...fakeClaudeEnv(dir, "--limit-once", join(dir, "limited"), "600"), RALPH_CODEX_BIN: codex };
    const result = await runRalph(["run", "--name", "c", "-n", "1", "--fallback-agent", "codex", "go"], dir, env);
    assert.equal(result.code, 3, result.stderr);
    assert.deepEqual(agentsStarted(dir), [
      [1, "claude"],
      [1, "codex"],
    ]);
    const logs = await runRalph(["logs", "c", "--iteration", "1"], dir, env);
    assert.equal(logs.code, 0, logs.stderr);
    assert.match(logs.stdout, /hello from the fallback/);
  });

  test("a usage limit resetting within --max-wait is waited out with the same agent", async () => {
    const dir = project();
    const env = fakeClaudeEnv(dir, "--limit-once", join(dir, "limited"), "1");
    const result = await runRalph(
      ["run", "--name", "c", "-n", "1", "--fallback-agent", "demo", "--max-wait", "1m", "go"],
      dir,
      env,
    );
    assert.equal(result.code, 3, result.stderr);
    assert.deepEqual(agentsStarted(dir), [
      [1, "claude"],
      [1, "claude"],
    ]);
    assert.equal(readEvents(runDir(dir)).filter((e) => e.type === "waiting_limit").length, 1);
  });

  test("a fallback that is the run's own agent, or named twice, is a usage error", async () => {
    const dir = project();
    for (const args of [
      ["--fallback-agent", "claude"],
      ["--fallback-agent", "demo", "--fallback-agent", "demo"],
      ["--fallback-agent", "command"],
    ]) {
      const result = await runRalph(["run", "--name", "c", ...args, "go"], dir, fakeClaudeEnv(dir));
      assert.equal(result.code, 2, args.join(" "));
      assert.match(result.stderr, /--fallback-agent/);
      assert.equal(result.stderr.trim().split("\n").length, 1, result.stderr);
    }
    const env = { ...fakeClaudeEnv(dir), RALPH_FALLBACK_AGENT: "codex,bogus" };
    const bad = await runRalph(["run", "--name", "c", "go"], dir, env);
    assert.equal(bad.code, 2);
    assert.match(
      bad.stderr,
      /^ralph: environment variable RALPH_FALLBACK_AGENT: expected a list of claude, codex, gemini, opencode, demo, got "codex,bogus"\n$/,
    );
  });

  test("fallback_agent and max_wait in ralph.yaml; the start says which agents stand in", async () => {
    const dir = project();
    writeFileSync(join(dir, "ralph.yaml"), "fallback_agent: [codex, demo]\nmax_wait: 15m\n");
    const result = await runRalph(
      ["run", "--name", "c", "-n", "1", "--dry-run", "--dry-run-delay", "0", "go"],
      dir,
      fakeClaudeEnv(dir),
    );
    assert.equal(result.code, 0, result.stderr);
    assert.match(
      result.stdout,
      /^on a usage limit resetting more than 15m away, the iteration runs with codex, then demo instead/m,
    );
  });
});
