// The real pinned Claude Code CLI against the fake Anthropic server, read by our adapter and parser.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { claudeAdapter, CLAUDE_BIN_VARIABLE } from "../../src/agents/claude.js";
import { processAlive } from "../helpers/cli.js";
import { cliCases } from "../fixtures/cli-cases.js";
import { runAgentCli, sessionOf, type CliRun, type CliRunOptions } from "../fixtures/run-agent-cli.js";
import { waitFor } from "../helpers/wait.js";
import { fakeClaudeEnvironment, PINNED_CLAUDE_BIN } from "../fixtures/fake-anthropic-env.js";
import {
  authErrorTurn,
  bashTurn,
  hangTurn,
  overloadedTurn,
  rateLimitTurn,
  startFakeAnthropic,
  textTurn,
  writeTurn,
  type FakeAnthropic,
  type FakeTurn,
} from "../fixtures/fake-anthropic.js";

const RUN_TIMEOUT_MS = 30_000;
const cases = cliCases("ralph-claude-cli-", startFakeAnthropic, (fake, dirs) =>
  fakeClaudeEnvironment(fake.url, dirs, { maxRetries: 0 }),
);
const savedBin = process.env[CLAUDE_BIN_VARIABLE];

before(() => {
  process.env[CLAUDE_BIN_VARIABLE] = PINNED_CLAUDE_BIN;
});

after(() => {
  if (savedBin === undefined) delete process.env[CLAUDE_BIN_VARIABLE];
  else process.env[CLAUDE_BIN_VARIABLE] = savedBin;
});

interface Case {
  fake: FakeAnthropic;
  cwd: string;
  /** Starts Claude Code through the adapter; `started` runs once it is spawned. */
  run(options?: { maxRetries?: number } & Pick<CliRunOptions, "input" | "argv" | "started">): Promise<CliRun>;
}

/** A fresh HOME, temp dir, project and fake server; `script` may name files under the project directory. */
async function newCase(script: FakeTurn[] | ((cwd: string) => FakeTurn[])): Promise<Case> {
  const c = await cases.newCase(script);
  return {
    fake: c.fake,
    cwd: c.cwd,
    run({ maxRetries = 0, ...options } = {}) {
      const env = fakeClaudeEnvironment(c.fake.url, c.dirs, { maxRetries });
      return runAgentCli({
        adapter: claudeAdapter,
        bin: PINNED_CLAUDE_BIN,
        cwd: c.cwd,
        env,
        scratchDir: c.base,
        timeoutMs: RUN_TIMEOUT_MS,
        children: cases.children,
        ...options,
      });
    },
  };
}

describe("Claude Code 2.1.197 against the fake API", { timeout: 120_000 }, () => {
  test("Write tool, then a promise: final message, cost, tokens and the file", async () => {
    const c = await newCase((cwd) => [
      writeTurn(join(cwd, "hello.txt"), "hello from the fake\n"),
      textTurn("Wrote hello.txt. <promise>DONE</promise>"),
    ]);
    const target = join(c.cwd, "hello.txt");
    const run = await c.run();

    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.outcome.sawResult, true);
    assert.equal(run.outcome.finalMessage, "Wrote hello.txt. <promise>DONE</promise>");
    assert.equal(run.outcome.error, undefined);
    assert.equal(run.outcome.turns, 2);
    assert.deepEqual(run.outcome.tokens, { input: 200, output: 40, cacheRead: 0, cacheWrite: 0 });
    // Claude Code prices the fake's tokens itself: its default model at $5/M input and $25/M output.
    assert.ok(Math.abs((run.outcome.costUsd ?? 0) - 0.002) < 1e-9, `cost ${String(run.outcome.costUsd)}`);
    assert.match(run.outcome.sessionId ?? "", /^[0-9a-f-]{36}$/);
    assert.equal(readFileSync(target, "utf8"), "hello from the fake\n");
    assert.deepEqual(
      run.events.filter((event) => event.kind === "tool_use").map((event) => [event.tool, event.text]),
      [["Write", target]],
    );
    assert.ok(run.events.some((event) => event.kind === "tool_result" && event.tool === "Write"));
    // The second main request carried the tool's output back to the model.
    const main = c.fake.mainRequests();
    assert.equal(main.length, 2);
    assert.match(main[1]?.lastMessageText ?? "", /File created successfully/);
    assert.equal(c.fake.remaining(), 0);
  });

  test("without --dangerously-skip-permissions, -p refuses the Write instead of waiting", async () => {
    const c = await newCase((cwd) => [writeTurn(join(cwd, "refused.txt"), "x"), textTurn("done")]);
    const run = await c.run({ argv: (argv) => argv.filter((arg) => arg !== "--dangerously-skip-permissions") });

    assert.equal(run.code, 0, run.stderr);
    assert.equal(existsSync(join(c.cwd, "refused.txt")), false);
    const result = run.events.find((event) => event.kind === "tool_result");
    assert.match(result?.text ?? "", /^error: .*permission/i);
  });

  test("429: one internal retry, then a rate_limit outcome", async () => {
    const c = await newCase([rateLimitTurn({ retryAfterSeconds: 1 }), rateLimitTurn({ retryAfterSeconds: 1 })]);
    const run = await c.run({ maxRetries: 1 });

    assert.equal(run.code, 1);
    assert.equal(run.outcome.sawResult, true);
    assert.equal(run.outcome.finalMessage, null);
    assert.equal(run.outcome.error?.kind, "rate_limit");
    assert.match(run.outcome.limit?.message ?? "", /429/);
    assert.ok(
      run.events.some(
        (event) => event.kind === "retry" && /API retry 1\/1 .*429/.test(event.text ?? "") && event.fatal === undefined,
      ),
    );
    assert.equal(c.fake.mainRequests().length, 2);
    assert.ok(run.durationMs < 15_000, `took ${run.durationMs} ms`);
  });

  test("401: an auth outcome, not a limit", async () => {
    const c = await newCase([authErrorTurn()]);
    const run = await c.run();

    assert.equal(run.code, 1);
    assert.equal(run.outcome.error?.kind, "auth");
    assert.equal(run.outcome.limit, undefined);
    assert.equal(run.outcome.finalMessage, null);
  });

  test("529 overloaded: an api outcome", async () => {
    const c = await newCase([overloadedTurn(529)]);
    const run = await c.run();

    assert.equal(run.code, 1);
    assert.equal(run.outcome.error?.kind, "api");
    assert.equal(run.outcome.limit, undefined);
  });

  test("remainingBudgetUsd becomes --max-budget-usd: Claude Code stops after the call that crossed it", async () => {
    const c = await newCase((cwd) => [writeTurn(join(cwd, "never.txt"), "x"), textTurn("done")]);
    const run = await c.run({ input: { remainingBudgetUsd: 0.0005 } });

    assert.equal(run.code, 1);
    assert.equal(run.outcome.error?.kind, "other");
    assert.match(run.outcome.error?.message ?? "", /budget/i);
    assert.equal(existsSync(join(c.cwd, "never.txt")), false);
    // `usage` is all zero in this result line; the counts come from `modelUsage`.
    assert.deepEqual(run.outcome.tokens, { input: 100, output: 20, cacheRead: 0, cacheWrite: 0 });
  });

  test("SIGINT while waiting on the model: exit 0, yet no final message", async () => {
    const c = await newCase([hangTurn()]);
    const run = await c.run({
      started: (child) => {
        void c.fake
          .waitForRequest((request) => request.kind === "main", RUN_TIMEOUT_MS)
          .then(() => child.kill("SIGINT"));
      },
    });

    // Measured: usually no result line at all, sometimes an error_during_execution one.
    assert.equal(run.code, 0);
    assert.equal(run.outcome.finalMessage, null);
    if (run.outcome.sawResult)
      assert.deepEqual(run.outcome.error, { kind: "other", message: "interrupted (aborted_streaming)" });
    else assert.equal(run.outcome.error, undefined);
  });

  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    const toolSurvives = signal === "SIGTERM";
    test(`${signal} during a Bash tool: the tool's own session ${toolSurvives ? "survives" : "is ended"}`, async () => {
      const c = await newCase((cwd) => [
        bashTurn(`echo $$ > ${join(cwd, "tool.pid")}; exec sleep 300`),
        textTurn("done"),
      ]);
      let toolPid = 0;
      let toolSession = 0;
      const run = await c.run({
        started: (child) => {
          void cases.waitForTool(join(c.cwd, "tool.pid"), RUN_TIMEOUT_MS).then((pid) => {
            toolPid = pid;
            toolSession = sessionOf(pid);
            child.kill(signal);
          });
        },
      });

      assert.ok(toolPid > 0, "the tool started");
      assert.equal(toolSession, toolPid, "the tool leads a session of its own");
      assert.equal(run.outcome.finalMessage, null);
      if (toolSurvives) {
        assert.equal(run.code, 143);
        assert.equal(run.outcome.sawResult, false);
        assert.equal(processAlive(toolPid), true);
      } else {
        assert.equal(run.outcome.sawResult, true);
        await waitFor(() => !processAlive(toolPid), `the tool's process ${toolPid} to end`, 5000);
      }
    });
  }
});

describe("the fake Anthropic server itself", () => {
  const post = (fake: FakeAnthropic, body: unknown) =>
    fetch(`${fake.url}/v1/messages?beta=true`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
  const tools = [{ name: "Write", input_schema: { type: "object" } }];

  test("side calls (no tools) never consume the script; main calls do, in order", async () => {
    const fake = await startFakeAnthropic([textTurn("first"), textTurn("second")]);
    cases.track(fake);
    const schema = { type: "object", properties: { title: { type: "string" } }, required: ["title"] };
    const side = await post(fake, {
      model: "m",
      tools: [],
      messages: [{ role: "user", content: "title?" }],
      output_config: { format: { type: "json_schema", schema } },
    });
    const sideBody = (await side.json()) as { content: Array<{ text: string }> };
    assert.deepEqual(JSON.parse(sideBody.content[0]?.text ?? ""), { title: "Fake title" });
    assert.equal(fake.remaining(), 2);
    const main = await post(fake, {
      model: "m",
      tools,
      stream: true,
      messages: [
        { role: "user", content: "go" },
        { role: "system", content: "reminder" },
      ],
    });
    const sse = await main.text();
    assert.equal(main.headers.get("content-type"), "text/event-stream");
    assert.deepEqual(
      [...sse.matchAll(/^event: (\w+)$/gm)].map((match) => match[1]),
      [
        "message_start",
        "content_block_start",
        "content_block_delta",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
      ],
    );
    assert.match(sse, /"stop_reason":"end_turn"/);
    assert.equal(fake.remaining(), 1);
    assert.deepEqual(
      fake.mainRequests().map((request) => [request.turn, request.lastMessageText]),
      [[0, "go"]],
    );
  });

  test("tool_use streams its input as input_json_delta; errors carry status, headers and body", async () => {
    const fake = await startFakeAnthropic([
      bashTurn("ls"),
      rateLimitTurn({ retryAfterSeconds: 7, shouldRetry: false }),
    ]);
    cases.track(fake);
    const sse = await (await post(fake, { model: "m", tools, stream: true, messages: [] })).text();
    const json = [...sse.matchAll(/"partial_json":("(?:[^"\\]|\\.)*")/g)]
      .map((match) => JSON.parse(match[1] as string) as string)
      .join("");
    assert.deepEqual(JSON.parse(json), { command: "ls", description: "Run a command" });
    assert.match(sse, /"stop_reason":"tool_use"/);
    const limited = await post(fake, { model: "m", tools, stream: true, messages: [] });
    assert.equal(limited.status, 429);
    assert.equal(limited.headers.get("retry-after"), "7");
    assert.equal(limited.headers.get("x-should-retry"), "false");
    assert.deepEqual(((await limited.json()) as { error: { type: string } }).error.type, "rate_limit_error");
  });

  test("probe, count_tokens and unknown paths get harmless replies; close() ends a hanging reply", async () => {
    const logged: string[] = [];
    const fake = await startFakeAnthropic([hangTurn()], { log: (text) => logged.push(text) });
    assert.equal((await fetch(fake.url, { method: "HEAD" })).status, 404);
    const counted = await fetch(`${fake.url}/v1/messages/count_tokens`, { method: "POST", body: "{}" });
    assert.deepEqual(await counted.json(), { input_tokens: 42 });
    assert.equal((await fetch(`${fake.url}/api/whatever`)).status, 404);
    assert.deepEqual(logged, ["fake-anthropic: unhandled GET /api/whatever"]);
    const hanging = post(fake, { model: "m", tools, stream: true, messages: [] }).then(
      () => "answered",
      () => "closed",
    );
    await fake.waitForRequest((request) => request.kind === "main", 5000);
    await fake.close();
    assert.equal(await hanging, "closed");
  });
});
