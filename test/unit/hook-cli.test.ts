// `ralph hook start`, `cancel` and `handle` through the built CLI.
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";
import { RALPH, cleanEnv, finishWithin, resultOf, runRalph, tempProject, type CliResult } from "../helpers/cli.js";

// No session id leaks in from a Claude Code session the tests may run under.
const ENV = Object.fromEntries(Object.entries(cleanEnv()).filter(([name]) => !name.startsWith("CLAUDE")));

function project(): string {
  const { dir, cleanup } = tempProject("ralph-hook-cli-");
  after(cleanup);
  return dir;
}

/** Runs ralph with `stdin` piped in. */
function ralphWithInput(args: string[], cwd: string, stdin: string, env: NodeJS.ProcessEnv = ENV): Promise<CliResult> {
  const child = spawn(process.execPath, [RALPH, ...args], { cwd, env, stdio: ["pipe", "pipe", "pipe"] });
  child.stdin.end(stdin);
  return finishWithin({ child, done: resultOf(child) }, 30_000);
}

function stateFields(dir: string): { fields: Record<string, unknown>; body: string } {
  const text = readFileSync(join(dir, ".claude", "ralph-loop.local.md"), "utf8");
  const [, yaml, body] = /^---\n([\s\S]*?)---\n([\s\S]*)$/.exec(text) ?? [];
  return { fields: parse(yaml ?? "") as Record<string, unknown>, body: body ?? "" };
}

function onlyRun(dir: string): string {
  const ids = readdirSync(join(dir, ".ralph", "runs"));
  assert.equal(ids.length, 1);
  return join(dir, ".ralph", "runs", ids[0] as string);
}

describe("ralph hook start / cancel / handle (CLI)", () => {
  test("start writes the state file, the run directory (mode hook) and installs the hook", async () => {
    const dir = project();
    const result = await runRalph(
      ["hook", "start", "Fix", "the", "bug", "-n", "08", "--completion-promise", "ALL DONE", "--check", "npm test"],
      dir,
      ENV,
    );
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /in-session loop started · run \d{8}-\d{6}-[0-9a-f]{4} · max 8 iterations/);
    const { fields, body } = stateFields(dir);
    assert.equal(body, "Fix the bug\n");
    assert.equal(fields.active, true);
    assert.equal(fields.iteration, 1);
    assert.equal(fields.session_id, "");
    assert.equal(fields.max_iterations, 8);
    assert.equal(fields.completion_promise, "ALL DONE");
    assert.deepEqual(fields.completion_criteria, [{ type: "command", check: "npm test" }]);
    assert.ok(!Number.isNaN(Date.parse(String(fields.started_at))));
    const runDir = onlyRun(dir);
    assert.equal(fields.run_id, runDir.split("/").at(-1));
    for (const name of ["status.json", "state.md", "progress.txt", "events.jsonl", "run.log"])
      assert.ok(existsSync(join(runDir, name)), name);
    const status = JSON.parse(readFileSync(join(runDir, "status.json"), "utf8")) as Record<string, unknown>;
    assert.equal(status.mode, "hook");
    assert.equal(status.iteration, 1);
    assert.match(readFileSync(join(dir, ".claude", "settings.local.json"), "utf8"), /hook handle/);
    assert.ok(!existsSync(join(dir, ".claude", "settings.json")), "nothing machine-specific in the shared settings");
    const list = await runRalph(["list", "--json"], dir, ENV);
    assert.equal((JSON.parse(list.stdout) as { runs: Array<{ state: string }> }).runs[0]?.state, "running");
  });

  test("--stdin: shell-like quoting, nothing expanded; a multi-word promise stays one value, a URL stays intact", async () => {
    const dir = project();
    const text = `Check https://x.test/p?param=1&x=y and *.md for $HOME --completion-promise "ALL TESTS PASS" --max-iterations 0 --check 'test -f ok'\n`;
    const result = await ralphWithInput(["hook", "start", "--stdin"], dir, text);
    assert.equal(result.code, 0, result.stderr);
    const { fields, body } = stateFields(dir);
    assert.equal(body, "Check https://x.test/p?param=1&x=y and *.md for $HOME\n");
    assert.equal(fields.completion_promise, "ALL TESTS PASS");
    assert.equal(fields.max_iterations, 0);
    assert.deepEqual(fields.completion_criteria, [{ type: "command", check: "test -f ok" }]);
    assert.match(
      result.stdout,
      /pauses until you send a message/,
      "unlimited loops are told about Claude Code's block cap",
    );
  });

  test("started from inside a session (CLAUDE_CODE_SESSION_ID), the loop is bound to it at once", async () => {
    const dir = project();
    const session = { ...ENV, CLAUDE_CODE_SESSION_ID: "0b9e5a4c-1111-2222-3333-444455556666" };
    const result = await runRalph(["hook", "start", "task"], dir, session);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(stateFields(dir).fields.session_id, "0b9e5a4c-1111-2222-3333-444455556666");
    // Claude Code reads hooks when a session starts: a hook installed from inside one needs a restart.
    assert.match(result.stdout, /WARNING: the Stop hook was only now installed.*claude --continue/);
    assert.equal((await runRalph(["hook", "cancel"], dir, ENV)).code, 0);
    const again = await runRalph(["hook", "start", "task"], dir, session);
    assert.doesNotMatch(again.stdout, /WARNING/);
  });

  for (const [name, args, stdin, expected] of [
    ["no prompt", ["hook", "start"], null, /no prompt given/],
    ["a bad --max-iterations", ["hook", "start", "x", "-n", "-1"], null, /--max-iterations: expected a whole number/],
    ["an unknown option", ["hook", "start", "x", "--bogus"], null, /unknown option '--bogus'/],
    [
      "an unterminated quote on stdin",
      ["hook", "start", "--stdin"],
      "Fix the user's login",
      /--stdin: unterminated ' quote/,
    ],
    ["an unknown option on stdin", ["hook", "start", "--stdin"], "x --nope", /--stdin: unknown option '--nope'/],
    ["--stdin with other arguments", ["hook", "start", "--stdin", "x"], "y", /give no other arguments/],
  ] as const) {
    test(`usage error, exit 2, nothing created: ${name}`, async () => {
      const dir = project();
      const result = stdin === null ? await runRalph([...args], dir, ENV) : await ralphWithInput([...args], dir, stdin);
      assert.equal(result.code, 2, result.stdout);
      assert.match(result.stderr, expected);
      assert.equal(result.stderr.trim().split("\n").length, 1, result.stderr);
      assert.deepEqual(readdirSync(dir), []);
    });
  }

  test("start refuses while a loop is active; cancel records STOPPED at once; then a new loop may start", async () => {
    const dir = project();
    assert.equal((await runRalph(["hook", "start", "first"], dir, ENV)).code, 0);
    const before = readFileSync(join(dir, ".claude", "ralph-loop.local.md"), "utf8");
    const refused = await runRalph(["hook", "start", "second"], dir, ENV);
    assert.equal(refused.code, 2);
    assert.match(refused.stderr, /already active .*ralph hook cancel/);
    assert.equal(readFileSync(join(dir, ".claude", "ralph-loop.local.md"), "utf8"), before);

    const cancelled = await runRalph(["hook", "cancel"], dir, ENV);
    assert.equal(cancelled.code, 0, cancelled.stderr);
    assert.match(cancelled.stdout, /cancelled at iteration 1 .*STOPPED/);
    assert.equal(stateFields(dir).fields.active, false);
    const runDir = onlyRun(dir);
    assert.deepEqual(readFileSync(join(runDir, "progress.txt"), "utf8").trimEnd().split("\n").slice(-2), [
      "completion_reason=STOPPED",
      "promise=COMPLETE",
    ]);
    const list = JSON.parse((await runRalph(["list", "--json"], dir, ENV)).stdout) as {
      runs: Array<{ state: string }>;
    };
    assert.deepEqual(
      list.runs.map((run) => run.state),
      ["STOPPED"],
    );
    assert.match((await runRalph(["hook", "cancel"], dir, ENV)).stdout, /was not active/);

    assert.equal((await runRalph(["hook", "start", "second"], dir, ENV)).code, 0);
    assert.equal(stateFields(dir).body, "second\n");
    assert.equal(readdirSync(join(dir, ".ralph", "runs")).length, 2, "the first run's directory keeps its history");
  });

  test("handle prints the block decision as JSON on stdout, exit 0", async () => {
    const dir = project();
    assert.equal((await runRalph(["hook", "start", "Do", "it", "-n", "2"], dir, ENV)).code, 0);
    const hookInput = JSON.stringify({
      session_id: "s1",
      transcript_path: "/nonexistent",
      cwd: dir,
      hook_event_name: "Stop",
      stop_hook_active: false,
      last_assistant_message: "working",
    });
    const first = await ralphWithInput(["hook", "handle"], dir, hookInput);
    assert.equal(first.code, 0, first.stderr);
    const decision = JSON.parse(first.stdout) as Record<string, unknown>;
    assert.deepEqual(Object.keys(decision), ["decision", "reason", "systemMessage"]);
    assert.equal(decision.decision, "block");
    assert.equal(decision.reason, "Do it");
    assert.match(String(decision.systemMessage), /^ralph iteration 2\/2/);
    const last = await ralphWithInput(
      ["hook", "handle"],
      dir,
      hookInput.replace('"stop_hook_active":false', '"stop_hook_active":true'),
    );
    assert.equal(last.code, 0);
    assert.match(String((JSON.parse(last.stdout) as Record<string, unknown>).systemMessage), /max_iterations reached/);
    assert.equal(last.stdout.includes("decision"), false);
  });

  test("handle never crashes the session: an internal error lets the stop through, records FAILED, one stderr line", async () => {
    const dir = project();
    assert.equal((await runRalph(["hook", "start", "x"], dir, ENV)).code, 0);
    const runDir = onlyRun(dir);
    // events.jsonl turned into a directory: appending the iteration's event throws inside the hook.
    const events = join(runDir, "events.jsonl");
    rmSync(events);
    mkdirSync(events);
    const result = await ralphWithInput(
      ["hook", "handle"],
      dir,
      JSON.stringify({ session_id: "s1", stop_hook_active: false, last_assistant_message: "hi" }),
    );
    assert.equal(result.code, 0);
    assert.equal(result.stderr.trim().split("\n").length, 1, result.stderr);
    assert.match(result.stderr, /^ralph hook handle: .*EISDIR.*the loop ended \(FAILED, run /);
    assert.doesNotMatch(result.stderr, /\n\s+at /);
    assert.equal(result.stdout.includes('"decision"'), false);
    assert.deepEqual(readFileSync(join(runDir, "progress.txt"), "utf8").trimEnd().split("\n").slice(-2), [
      "completion_reason=FAILED",
      "promise=COMPLETE",
    ]);
    assert.equal(stateFields(dir).fields.active, false);

    const garbage = await ralphWithInput(["hook", "handle"], project(), "this is not json");
    assert.equal(garbage.code, 0);
    assert.match(garbage.stderr, /^ralph hook handle: the hook input is not JSON/);
  });
});
