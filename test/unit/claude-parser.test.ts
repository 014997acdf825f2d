// The Claude Code stream-json parser on real captured output, plus the adapter's command line.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { claudeAdapter, CLAUDE_BIN_VARIABLE } from "../../src/agents/claude.js";
import { createClaudeParser, summarizeToolInput } from "../../src/agents/claude-parser.js";
import type { AgentEvent, AgentOutcome } from "../../src/agents/types.js";
import * as captured from "../fixtures/fake-anthropic-captures.js";

const NOW = new Date("2026-11-30T12:00:00Z");
const EXITED = { code: 0, signal: null };

function parse(
  lines: string[],
  stderr = "",
  exit: { code: number | null; signal: string | null } = EXITED,
): { events: AgentEvent[]; outcome: AgentOutcome } {
  const parser = createClaudeParser({ prompt: "Do the task.", now: () => NOW });
  const events = lines.flatMap((line) => parser.line(line));
  return { events, outcome: parser.finish(stderr, exit) };
}

function line(value: unknown): string {
  return JSON.stringify(value);
}

describe("createClaudeParser on captured Claude Code 2.1.197 output", () => {
  test("Write then promise: events, final message, cost, tokens, turns, session", () => {
    const { events, outcome } = parse(captured.WRITE_THEN_PROMISE);
    assert.deepEqual(
      events.map((event) => [event.kind, event.tool ?? null]),
      [
        ["init", null],
        ["tool_use", "Write"],
        ["tool_result", "Write"],
        ["text", null],
        ["result", null],
      ],
    );
    assert.equal(events[1]?.text, "/project/hello.txt");
    assert.match(events[2]?.text ?? "", /^File created successfully/);
    assert.equal(events[0]?.sessionId, "b7163544-6ae5-45c9-8218-931aa9bac52f");
    assert.deepEqual(outcome, {
      finalMessage: "Wrote it. <promise>DONE</promise>",
      sawResult: true,
      sessionId: "b7163544-6ae5-45c9-8218-931aa9bac52f",
      costUsd: 0.00035,
      tokens: { input: 20, output: 10, cacheRead: 0, cacheWrite: 0 },
      model: "claude-opus-4-8[1m]",
      turns: 2,
    });
  });

  test("a refused tool shows as an error tool_result; the run itself succeeded", () => {
    const { events, outcome } = parse(captured.WRITE_REFUSED_WITHOUT_SKIP_PERMISSIONS);
    assert.match(
      events.find((event) => event.kind === "tool_result")?.text ?? "",
      /^error: Claude requested permissions/,
    );
    assert.equal(outcome.error, undefined);
  });

  test("429 after an internal retry: rate_limit with the message, the retry as an event", () => {
    const { events, outcome } = parse(captured.RATE_LIMIT_AFTER_ONE_RETRY, "", { code: 1, signal: null });
    assert.ok(
      events.some(
        (event) =>
          event.kind === "retry" &&
          event.text === "API retry 1/1 in 1.0s after 429 rate_limit" &&
          event.fatal === undefined,
      ),
    );
    assert.ok(events.some((event) => event.kind === "error" && /Request rejected \(429\)/.test(event.text ?? "")));
    assert.equal(outcome.finalMessage, null);
    assert.equal(outcome.sawResult, true);
    assert.deepEqual(outcome.error, {
      kind: "rate_limit",
      message: "API Error: Request rejected (429) · Rate limited",
    });
    assert.deepEqual(outcome.limit, { message: "API Error: Request rejected (429) · Rate limited", resetAt: null });
  });

  const failures: Array<[string, string[], string]> = [
    ["401", captured.AUTH_401, "auth"],
    ["403", captured.FORBIDDEN_403, "auth"],
    ["400 billing_error", captured.BILLING_400, "auth"],
    ["529", captured.OVERLOADED_529, "api"],
  ];
  for (const [name, lines, kind] of failures) {
    test(`${name} is classified ${kind}, never a limit`, () => {
      const { outcome } = parse(lines, "", { code: 1, signal: null });
      assert.equal(outcome.error?.kind, kind);
      assert.equal(outcome.limit, undefined);
      assert.equal(outcome.finalMessage, null);
    });
  }

  test("the result line alone (api_error_status and text) classifies as well as the assistant's error field", () => {
    const kinds = [
      ...failures,
      ["429", captured.RATE_LIMIT_AFTER_ONE_RETRY, "rate_limit"] as [string, string[], string],
    ].map(([name, lines]) => [name, parse(lines.slice(-1)).outcome.error?.kind]);
    assert.deepEqual(kinds, [
      ["401", "auth"],
      ["403", "auth"],
      ["400 billing_error", "auth"],
      ["529", "api"],
      ["429", "rate_limit"],
    ]);
  });

  test("max budget before a tool: other error, tokens from modelUsage, no final message", () => {
    const { outcome } = parse(captured.MAX_BUDGET_BEFORE_TOOL, "", { code: 1, signal: null });
    assert.deepEqual(outcome.error, { kind: "other", message: "Reached maximum budget ($0.0001)" });
    assert.deepEqual(outcome.tokens, { input: 10, output: 5, cacheRead: 0, cacheWrite: 0 });
    assert.equal(outcome.costUsd, 0.000175);
    assert.equal(outcome.finalMessage, null);
  });

  test("max budget crossed by the final answer: that answer is still the final message", () => {
    const { outcome } = parse(captured.MAX_BUDGET_AFTER_ANSWER, "", { code: 1, signal: null });
    assert.equal(outcome.finalMessage, "All done. <promise>DONE</promise>");
    assert.equal(outcome.error?.kind, "other");
  });

  test("max turns", () => {
    const { outcome } = parse(captured.MAX_TURNS, "", { code: 1, signal: null });
    assert.deepEqual(outcome.error, { kind: "max_turns", message: "Reached maximum number of turns (1)" });
    assert.equal(outcome.finalMessage, null);
  });

  test("SIGINT during a tool: a result line, but no final message", () => {
    const { outcome } = parse(captured.SIGINT_DURING_BASH, "", { code: 1, signal: null });
    assert.equal(outcome.sawResult, true);
    assert.equal(outcome.finalMessage, null);
    assert.deepEqual(outcome.error, { kind: "other", message: "interrupted (aborted_tools)" });
  });

  test("SIGINT while streaming, with its rare result line", () => {
    const { outcome } = parse(captured.SIGINT_WHILE_STREAMING);
    assert.equal(outcome.finalMessage, null);
    assert.deepEqual(outcome.error, { kind: "other", message: "interrupted (aborted_streaming)" });
  });

  test("SIGTERM: no result line, so not a finished iteration, and no invented error", () => {
    const { outcome } = parse(captured.SIGTERM_DURING_BASH, "", { code: 143, signal: null });
    assert.equal(outcome.sawResult, false);
    assert.equal(outcome.finalMessage, null);
    assert.equal(outcome.error, undefined);
    assert.equal(outcome.costUsd, undefined);
    assert.match(outcome.sessionId ?? "", /^[0-9a-f-]{36}$/);
  });
});

describe("createClaudeParser on edge cases", () => {
  test("malformed and unknown lines never throw", () => {
    const parser = createClaudeParser({ prompt: "p" });
    assert.deepEqual(parser.line(""), []);
    assert.deepEqual(parser.line("   "), []);
    for (const text of [
      "not json",
      "{",
      "[1,2]",
      "null",
      "42",
      line({ type: "mystery" }),
      line({ type: "assistant" }),
      line({ type: "assistant", message: { content: "x" } }),
      line({ type: "user", message: null }),
      line({ type: "result", usage: "x" }),
    ]) {
      assert.doesNotThrow(() => parser.line(text), text);
    }
    assert.deepEqual(parser.line("not json"), [{ kind: "other", text: "not json" }]);
    assert.doesNotThrow(() => parser.finish("", EXITED));
  });

  test("a promise in a subagent's text is not the final message", () => {
    const { outcome } = parse([
      line({
        type: "assistant",
        message: { content: [{ type: "text", text: "Main answer." }] },
        parent_tool_use_id: null,
      }),
      line({
        type: "assistant",
        message: { content: [{ type: "text", text: "<promise>DONE</promise>" }] },
        parent_tool_use_id: "toolu_1",
      }),
      line({
        type: "result",
        subtype: "error_max_budget_usd",
        is_error: true,
        stop_reason: "end_turn",
        errors: ["Reached maximum budget ($1)"],
      }),
    ]);
    assert.equal(outcome.finalMessage, "Main answer.");
  });

  test("text before a tool call is not final: the tool result resets it", () => {
    const { outcome } = parse([
      line({
        type: "assistant",
        message: {
          content: [
            { type: "text", text: "<promise>DONE</promise>" },
            { type: "tool_use", id: "t1", name: "Bash", input: { command: "ls" } },
          ],
        },
      }),
      line({ type: "user", message: { content: [{ type: "tool_result", tool_use_id: "t1", content: "a.txt" }] } }),
      line({ type: "result", subtype: "error_max_turns", is_error: true, stop_reason: "tool_use", errors: [] }),
    ]);
    assert.equal(outcome.finalMessage, null);
    assert.equal(outcome.error?.kind, "max_turns");
  });

  test("a rejected rate_limit_event gives the structured reset time", () => {
    const resetsAt = Math.floor(NOW.getTime() / 1000) + 3600;
    const { events, outcome } = parse([
      line({ type: "rate_limit_event", rate_limit_info: { status: "rejected", resetsAt, rateLimitType: "five_hour" } }),
      ...captured.RATE_LIMIT_AFTER_ONE_RETRY.slice(-2),
    ]);
    assert.ok(events.some((event) => event.kind === "error" && event.text === "usage limit reached (five_hour)"));
    assert.equal(outcome.error?.kind, "rate_limit");
    assert.equal(outcome.limit?.resetAt?.getTime(), resetsAt * 1000);
  });

  test("a rate_limit_event that was only a warning, and a run that succeeded, is no error", () => {
    const { outcome } = parse([
      line({ type: "rate_limit_event", rate_limit_info: { status: "allowed_warning", utilization: 0.9 } }),
      ...captured.WRITE_THEN_PROMISE,
    ]);
    assert.equal(outcome.error, undefined);
  });

  test("without a result line, a usage-limit message on stderr is a limit with its reset", () => {
    const { outcome } = parse([], "Claude AI usage limit reached|1764590400\n", { code: 1, signal: null });
    assert.equal(outcome.error?.kind, "rate_limit");
    assert.equal(outcome.limit?.resetAt?.toISOString(), "2025-12-01T12:00:00.000Z");
  });

  test("killed while Claude Code was retrying a 429: rate_limit", () => {
    const { outcome } = parse(captured.RATE_LIMIT_AFTER_ONE_RETRY.slice(0, 2), "", { code: null, signal: "SIGKILL" });
    assert.equal(outcome.sawResult, false);
    assert.equal(outcome.error?.kind, "rate_limit");
  });

  test("root without IS_SANDBOX: the refusal on stderr becomes the error, with the way out; no retry fixes it", () => {
    const stderr = "--dangerously-skip-permissions cannot be used with root/sudo privileges for security reasons\n";
    const { outcome } = parse([], stderr, { code: 1, signal: null });
    assert.equal(outcome.error?.kind, "config");
    assert.match(outcome.error?.message ?? "", /IS_SANDBOX=1/);
  });

  test("a bad flag on stderr is a config error (no retry fixes it); an empty stderr after exit 0 is none", () => {
    assert.equal(
      parse([], "error: unknown option '--bogus'\n", { code: 1, signal: null }).outcome.error?.kind,
      "config",
    );
    assert.equal(parse([], "error: something broke\n", { code: 1, signal: null }).outcome.error?.kind, "other");
    assert.equal(parse([], "", EXITED).outcome.error, undefined);
  });

  test("tool summaries are one short line", () => {
    assert.equal(
      summarizeToolInput("Bash", { command: "npm test\n  && echo ok", description: "x" }),
      "npm test && echo ok",
    );
    assert.equal(summarizeToolInput("Edit", { file_path: "src/a.ts", old_string: "a", new_string: "b" }), "src/a.ts");
    assert.equal(summarizeToolInput("TodoWrite", { todos: [{}, {}] }), "2 todos");
    assert.equal(summarizeToolInput("Mystery", { n: 1 }), '{"n":1}');
    assert.equal(summarizeToolInput("Bash", { command: "x".repeat(500) }).length, 120);
    assert.equal(summarizeToolInput("Bash", null), "");
  });
});

describe("claudeAdapter", () => {
  test("argv: headless stream-json, permissions skipped, model and budget passed, prompt only on stdin", () => {
    const prompt = "Fix it; don't `rm -rf` $HOME * ?";
    const invocation = claudeAdapter.invocation({
      prompt,
      cwd: "/project",
      env: {},
      scratchDir: "/scratch",
      model: "sonnet",
      remainingBudgetUsd: 1.2345678,
    });
    assert.deepEqual(invocation.argv, [
      "claude",
      "-p",
      "--output-format",
      "stream-json",
      "--verbose",
      "--dangerously-skip-permissions",
      "--model",
      "sonnet",
      "--max-budget-usd",
      "1.234567",
    ]);
    assert.equal(invocation.stdin, prompt);
    assert.ok(!invocation.argv.some((arg) => arg.includes(prompt)));
    // The binary comes from the environment the adapter is given, never from the process's own.
    const plain = claudeAdapter.invocation({
      prompt,
      cwd: "/project",
      env: { [CLAUDE_BIN_VARIABLE]: "/opt/claude" },
      scratchDir: "/scratch",
    });
    assert.deepEqual(plain.argv, [
      "/opt/claude",
      "-p",
      "--output-format",
      "stream-json",
      "--verbose",
      "--dangerously-skip-permissions",
    ]);
    const saved = process.env[CLAUDE_BIN_VARIABLE];
    try {
      process.env[CLAUDE_BIN_VARIABLE] = "/from/process/env";
      assert.equal(
        claudeAdapter.invocation({ prompt, cwd: "/project", env: {}, scratchDir: "/scratch" }).argv[0],
        "claude",
      );
    } finally {
      if (saved === undefined) delete process.env[CLAUDE_BIN_VARIABLE];
      else process.env[CLAUDE_BIN_VARIABLE] = saved;
    }
  });

  test("a spent or tiny budget never becomes the invalid --max-budget-usd 0", () => {
    const argv = (remainingBudgetUsd: number) =>
      claudeAdapter.invocation({ prompt: "p", cwd: "/", env: {}, scratchDir: "/", remainingBudgetUsd }).argv;
    assert.ok(!argv(0).includes("--max-budget-usd"));
    assert.ok(!argv(-1).includes("--max-budget-usd"));
    assert.equal(argv(1e-9).at(-1), "0.000001");
  });

  test("SIGINT comes first: SIGTERM alone leaves Claude Code's tool processes running", () => {
    assert.deepEqual(claudeAdapter.politeSignals, ["SIGINT", "SIGTERM"]);
  });
});
