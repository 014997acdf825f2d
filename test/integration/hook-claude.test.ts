// The in-session loop with the real, pinned Claude Code CLI (`claude -p`) against the fake Anthropic API:
// project hooks from .claude/settings.json run in -p mode (no trust prompt is involved), and ralph's
// Stop hook drives the session until the promise, the iteration limit, or `active: false`.
import { after, describe, test, type TestContext } from "node:test";
import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse } from "yaml";
import { quoteShellWord } from "../../src/util/shell-words.js";
import { fakeClaudeEnvironment, PINNED_CLAUDE_BIN } from "../fixtures/fake-anthropic-env.js";
import {
  bashTurn,
  startFakeAnthropic,
  textTurn,
  type FakeAnthropic,
  type FakeTurn,
} from "../fixtures/fake-anthropic.js";
import { cleanEnv, runRalph } from "../helpers/cli.js";

const RUN_TIMEOUT_MS = 45_000;
const root = mkdtempSync(join(tmpdir(), "ralph-hook-claude-"));
const children = new Set<ChildProcess>();
const servers: FakeAnthropic[] = [];
// ralph itself runs without any Claude Code session variables the test runner may have inherited.
const RALPH_ENV = Object.fromEntries(Object.entries(cleanEnv()).filter(([name]) => !name.startsWith("CLAUDE")));
let caseCount = 0;

after(async () => {
  for (const child of children)
    if (child.exitCode === null && child.signalCode === null && child.pid) process.kill(child.pid, "SIGKILL");
  await Promise.all(servers.map((server) => server.close()));
  rmSync(root, { recursive: true, force: true });
});

interface ClaudeRun {
  code: number | null;
  stdout: string;
  stderr: string;
  sessionId: string | null;
}

interface Case {
  fake: FakeAnthropic;
  project: string;
  /** Every Stop hook input Claude Code sent, logged by a second (pre-existing) Stop hook. */
  hookInputs(): Array<Record<string, unknown>>;
  claude(args: string[], env?: Record<string, string>): Promise<ClaudeRun>;
  ralph(args: string[]): ReturnType<typeof runRalph>;
  state(): { fields: Record<string, unknown>; body: string };
  runDir(): string;
}

async function newCase(script: FakeTurn[]): Promise<Case> {
  caseCount += 1;
  const base = join(root, `case-${caseCount}`);
  const dirs = { home: join(base, "home"), tmp: join(base, "tmp") };
  const project = join(base, "project");
  for (const dir of [dirs.home, dirs.tmp, join(project, ".claude")]) mkdirSync(dir, { recursive: true });
  const inputs = join(base, "hook-inputs.jsonl");
  const logger = `cat >> ${quoteShellWord(inputs)}; echo >> ${quoteShellWord(inputs)}`;
  writeFileSync(
    join(project, ".claude", "settings.json"),
    JSON.stringify({ model: "claude-fake", hooks: { Stop: [{ hooks: [{ type: "command", command: logger }] }] } }),
  );
  const fake = await startFakeAnthropic(script, { whenEmpty: textTurn("Still working on it.") });
  servers.push(fake);
  return {
    fake,
    project,
    hookInputs: () =>
      existsSync(inputs)
        ? readFileSync(inputs, "utf8")
            .split("\n")
            .filter((line) => line.trim() !== "")
            .map((line) => JSON.parse(line) as Record<string, unknown>)
        : [],
    claude(args, env = {}) {
      const child = spawn(PINNED_CLAUDE_BIN, ["-p", "--output-format", "stream-json", "--verbose", ...args], {
        cwd: project,
        env: { ...fakeClaudeEnvironment(fake.url, dirs), ...env },
        stdio: ["ignore", "pipe", "pipe"],
      });
      children.add(child);
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
      child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
      const timer = setTimeout(() => child.kill("SIGKILL"), RUN_TIMEOUT_MS);
      return new Promise((resolve) =>
        child.on("close", (code) => {
          clearTimeout(timer);
          const result = stdout
            .split("\n")
            .filter((line) => line.startsWith('{"type":"result"'))
            .at(-1);
          const sessionId = result ? ((JSON.parse(result) as { session_id?: string }).session_id ?? null) : null;
          resolve({ code, stdout, stderr, sessionId });
        }),
      );
    },
    ralph: (args) => runRalph(args, project, RALPH_ENV),
    state() {
      const text = readFileSync(join(project, ".claude", "ralph-loop.local.md"), "utf8");
      const [, yaml, body] = /^---\n([\s\S]*?)---\n([\s\S]*)$/.exec(text) ?? [];
      return { fields: parse(yaml ?? "") as Record<string, unknown>, body: body ?? "" };
    },
    runDir() {
      const ids = readdirSync(join(project, ".ralph", "runs"));
      assert.equal(ids.length, 1, "one run directory");
      return join(project, ".ralph", "runs", ids[0] as string);
    },
  };
}

function progressOf(c: Case): { iterations: number[]; results: string[]; marker: string[] } {
  const text = readFileSync(join(c.runDir(), "progress.txt"), "utf8");
  return {
    iterations: [...text.matchAll(/^iteration=(\d+)$/gm)].map((match) => Number(match[1])),
    results: [...text.matchAll(/^result=(\w+)$/gm)].map((match) => match[1] as string),
    marker: text.trimEnd().split("\n").slice(-2),
  };
}

async function listed(c: Case): Promise<{ state: string; iteration: number; mode: string | null }> {
  const list = await c.ralph(["list", "--json"]);
  assert.equal(list.code, 0, list.stderr);
  const runs = (JSON.parse(list.stdout) as { runs: Array<{ state: string; iteration: number; mode: string | null }> })
    .runs;
  assert.equal(runs.length, 1);
  return runs[0] as { state: string; iteration: number; mode: string | null };
}

const PROMPT = "Make the tests pass. Output <promise>ALL TESTS PASS</promise> when they do.";

describe("in-session loop with Claude Code 2.1.197 (claude -p, fake API)", { timeout: 120_000 }, () => {
  test("loops until the promise: exactly 3 iterations, DONE, listed by ralph list", async (t: TestContext) => {
    const c = await newCase([
      textTurn("Working on it."),
      textTurn("Almost there."),
      textTurn("All green now.\n<promise>ALL TESTS PASS</promise>"),
    ]);
    const started = await c.ralph([
      "hook",
      "start",
      PROMPT,
      "--completion-promise",
      "ALL TESTS PASS",
      "--max-iterations",
      "10",
    ]);
    assert.equal(started.code, 0, started.stderr);
    const run = await c.claude(["--dangerously-skip-permissions", PROMPT]);
    assert.equal(run.code, 0, run.stderr);

    const main = c.fake.mainRequests();
    assert.equal(main.length, 3, "one model turn per iteration");
    for (const request of main.slice(1)) assert.equal(request.lastMessageText, `Stop hook feedback:\n${PROMPT}`);
    const progress = progressOf(c);
    assert.deepEqual(progress.iterations, [1, 2, 3]);
    assert.deepEqual(progress.results, ["continue", "continue", "done"]);
    assert.deepEqual(progress.marker, ["completion_reason=DONE", "promise=COMPLETE"]);
    const summary = await listed(c);
    assert.deepEqual([summary.state, summary.iteration, summary.mode], ["DONE", 3, "hook"]);
    // Tokens come from the session transcript: 3 calls of the fake's default usage (100 in, 20 out).
    const status = JSON.parse(
      readFileSync(join(c.project, ".ralph", "runs", String(c.state().fields.run_id), "status.json"), "utf8"),
    ) as { tokens: unknown };
    assert.deepEqual(status.tokens, { input: 300, output: 60, cacheRead: 0, cacheWrite: 0 });
    const state = c.state();
    assert.equal(state.fields.active, false);
    assert.equal(state.fields.iteration, 3);
    assert.equal(state.fields.session_id, run.sessionId, "bound to the session that reached the hook first");

    // What 2.1.197 sends to a Stop hook, logged by the project's own (preserved) Stop hook.
    const inputs = c.hookInputs();
    t.diagnostic(`Stop hook input: ${JSON.stringify(inputs[0])}`);
    assert.equal(inputs.length, 3);
    assert.deepEqual(
      inputs.map((input) => input.stop_hook_active),
      [false, true, true],
    );
    assert.deepEqual(
      inputs.map((input) => input.last_assistant_message),
      ["Working on it.", "Almost there.", "All green now.\n<promise>ALL TESTS PASS</promise>"],
    );
    for (const input of inputs) {
      assert.equal(input.hook_event_name, "Stop");
      assert.equal(input.session_id, run.sessionId);
      assert.equal(input.cwd, c.project);
      assert.match(String(input.transcript_path), /\.jsonl$/);
    }
  });

  test("active: false written during an iteration stops the loop at the next stop (STOPPED)", async () => {
    const c = await newCase([
      textTurn("First pass done."),
      bashTurn("sed -i 's/^active: true$/active: false/' .claude/ralph-loop.local.md"),
      textTurn("Second pass done."),
    ]);
    assert.equal(
      (await c.ralph(["hook", "start", PROMPT, "--completion-promise", "ALL TESTS PASS", "-n", "10"])).code,
      0,
    );
    const run = await c.claude(["--dangerously-skip-permissions", PROMPT]);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(
      c.fake.mainRequests().length,
      3,
      "iteration 1, then the tool call and the text of iteration 2; nothing after",
    );
    assert.equal(c.hookInputs().length, 2);
    const progress = progressOf(c);
    assert.deepEqual(progress.iterations, [1]);
    assert.deepEqual(progress.marker, ["completion_reason=STOPPED", "promise=COMPLETE"]);
    assert.equal((await listed(c)).state, "STOPPED");
  });

  // It also shows max_iterations without the promise: the resumed turn stops after exactly the 11th iteration, MAX_ITERATIONS.
  test("Claude Code's cap of 8 consecutive blocks: the loop pauses after 9 iterations in one turn, the next message resumes it up to max_iterations", async () => {
    const c = await newCase([]);
    assert.equal((await c.ralph(["hook", "start", PROMPT, "-n", "11"])).code, 0);
    const first = await c.claude(["--dangerously-skip-permissions", PROMPT]);
    assert.equal(first.code, 0, first.stderr);
    assert.equal(c.fake.mainRequests().length, 9, "8 honoured blocks: 9 model turns in one turn");
    assert.equal(c.hookInputs().length, 9);
    assert.deepEqual(
      c.hookInputs().map((input) => input.stop_hook_active),
      [false, true, true, true, true, true, true, true, true],
    );
    assert.doesNotMatch(
      first.stdout,
      /consecutive times/,
      "ralph let the 9th stop through instead of having Claude Code override it",
    );
    assert.equal(c.state().fields.iteration, 10);
    assert.equal(c.state().fields.active, true);
    assert.equal((await listed(c)).state, "running");
    assert.deepEqual(progressOf(c).results.at(-1), "paused");

    const resumed = await c.claude(["--dangerously-skip-permissions", "--resume", first.sessionId ?? "", "continue"]);
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.equal(resumed.sessionId, first.sessionId, "--resume keeps the session id, so the binding holds");
    assert.equal(c.fake.mainRequests().length, 11);
    assert.deepEqual(progressOf(c).iterations, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
    assert.deepEqual(progressOf(c).marker, ["completion_reason=MAX_ITERATIONS", "promise=COMPLETE"]);
    assert.equal((await listed(c)).state, "MAX_ITERATIONS");
    assert.equal(c.state().fields.active, false);
  });

  test("/ralph-loop: arguments reach ralph through the here-document unchanged, the loop binds to the session at once", async () => {
    const c = await newCase([textTurn("Looking at the login."), textTurn("Fixed.\n<promise>ALL DONE</promise>")]);
    const installed = await c.ralph(["hook", "install", "--commands"]);
    assert.equal(installed.code, 0, installed.stderr);
    // No --dangerously-skip-permissions: the command's allowed-tools pattern must allow the ```! block.
    const run = await c.claude([
      `/ralph-loop Fix the login at https://x.test/?a=1&b=2 for $USER and *.md --completion-promise "ALL DONE" -n 4`,
    ]);
    assert.equal(run.code, 0, run.stderr);
    const state = c.state();
    assert.equal(state.body, "Fix the login at https://x.test/?a=1&b=2 for $USER and *.md\n");
    assert.equal(state.fields.completion_promise, "ALL DONE");
    assert.equal(state.fields.max_iterations, 4);
    assert.equal(state.fields.session_id, run.sessionId);
    assert.match(
      c.fake.mainRequests()[0]?.lastMessageText ?? "",
      /in-session loop started[\s\S]*Work on the task above now/,
    );
    assert.equal(c.fake.mainRequests().length, 2);
    assert.deepEqual(progressOf(c).marker, ["completion_reason=DONE", "promise=COMPLETE"]);
  });
});
