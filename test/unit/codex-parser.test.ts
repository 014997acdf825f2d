// The Codex `exec --json` parser, fed lines recorded from Codex 0.171.0.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { codexResetTime, createCodexParser } from "../../src/agents/codex-parser.js";
import type { AgentEvent, AgentOutcome } from "../../src/agents/types.js";

const THREAD = "01a22af5-a587-7953-8717-c5d2fa5a35d3";
const STARTED = `{"type":"thread.started","thread_id":"${THREAD}"}`;
const WARNING =
  '{"type":"item.completed","item":{"id":"item_0","type":"error","message":"Model metadata for `fake-model` not found. Defaulting to fallback metadata; this can degrade performance and cause issues."}}';
const TURN = '{"type":"turn.started"}';
const COMMAND = "/bin/bash -lc 'printf hello > hello.txt && echo wrote'";
const SHELL_STARTED = `{"type":"item.started","item":{"id":"item_1","type":"command_execution","command":${JSON.stringify(COMMAND)},"aggregated_output":"","exit_code":null,"status":"in_progress"}}`;
const SHELL_DONE = `{"type":"item.completed","item":{"id":"item_1","type":"command_execution","command":${JSON.stringify(COMMAND)},"aggregated_output":"wrote\\n","exit_code":0,"status":"completed"}}`;
const message = (id: string, text: string) =>
  JSON.stringify({ type: "item.completed", item: { id, type: "agent_message", text } });
const COMPLETED =
  '{"type":"turn.completed","usage":{"input_tokens":200,"cached_input_tokens":20,"cache_write_input_tokens":0,"output_tokens":40,"reasoning_output_tokens":0}}';
const failedTurn = (text: string) => [
  JSON.stringify({ type: "error", message: text }),
  JSON.stringify({ type: "turn.failed", error: { message: text } }),
];

// 2030-03-17 10:00 local time: Codex prints reset times in the local zone.
const NOW = new Date(2030, 2, 17, 10, 0);

function parse(
  lines: string[],
  exit: { code: number | null; signal: string | null } = { code: 0, signal: null },
  stderr = "",
): { events: AgentEvent[]; outcome: AgentOutcome } {
  const parser = createCodexParser({ prompt: "Do it. Say <promise>DONE</promise> when done.", now: () => NOW });
  const events = lines.flatMap((line) => parser.line(line));
  return { events, outcome: parser.finish(stderr, exit) };
}

describe("codex parser", () => {
  test("a run with a shell call: events, final message, thread id as session, tokens with cached input apart", () => {
    const { events, outcome } = parse([
      STARTED,
      WARNING,
      TURN,
      SHELL_STARTED,
      SHELL_DONE,
      message("item_2", "Wrote it. <promise>DONE</promise>"),
      COMPLETED,
    ]);

    assert.deepEqual(events, [
      { kind: "init", sessionId: THREAD },
      {
        kind: "error",
        text: "Model metadata for `fake-model` not found. Defaulting to fallback metadata; this can degrade performance and cause issues.",
      },
      { kind: "tool_use", tool: "shell", text: COMMAND },
      { kind: "tool_result", tool: "shell", text: "wrote\n" },
      { kind: "text", text: "Wrote it. <promise>DONE</promise>" },
      { kind: "result", text: "Wrote it. <promise>DONE</promise>", sessionId: THREAD },
    ]);
    assert.deepEqual(outcome, {
      finalMessage: "Wrote it. <promise>DONE</promise>",
      sawResult: true,
      sessionId: THREAD,
      tokens: { input: 180, output: 40, cacheRead: 20, cacheWrite: 0 },
    });
  });

  test("a message before a tool call is a preamble, not the final message", () => {
    const { outcome } = parse([
      STARTED,
      TURN,
      message("item_0", "<promise>DONE</promise> soon; first the file."),
      SHELL_STARTED,
      SHELL_DONE,
      message("item_2", "Still working."),
      COMPLETED,
    ]);
    assert.equal(outcome.finalMessage, "Still working.");
  });

  test("a turn without a final message has none", () => {
    const { outcome } = parse([STARTED, TURN, message("item_0", "Let me look."), SHELL_STARTED, SHELL_DONE, COMPLETED]);
    assert.equal(outcome.finalMessage, null);
    assert.equal(outcome.sawResult, true);
  });

  test("file changes, failed commands and MCP calls become tool events", () => {
    const { events } = parse([
      // What `apply_patch` gives, whether called as a tool or through the shell.
      '{"type":"item.started","item":{"id":"item_3","type":"file_change","changes":[{"path":"/p/hello.txt","kind":"add"},{"path":"/p/a.ts","kind":"update"}],"status":"in_progress"}}',
      '{"type":"item.completed","item":{"id":"item_3","type":"file_change","changes":[{"path":"/p/hello.txt","kind":"add"},{"path":"/p/a.ts","kind":"update"}],"status":"completed"}}',
      '{"type":"item.started","item":{"id":"item_4","type":"command_execution","command":"false","aggregated_output":"","exit_code":null,"status":"in_progress"}}',
      '{"type":"item.completed","item":{"id":"item_4","type":"command_execution","command":"false","aggregated_output":"","exit_code":1,"status":"failed"}}',
      '{"type":"item.completed","item":{"id":"item_5","type":"mcp_tool_call","server":"docs","tool":"search","arguments":{"q":"x"},"error":{"message":"down"},"status":"failed"}}',
    ]);
    assert.deepEqual(events, [
      { kind: "tool_use", tool: "apply_patch", text: "add /p/hello.txt, update /p/a.ts" },
      { kind: "tool_result", tool: "apply_patch", text: "completed" },
      { kind: "tool_use", tool: "shell", text: "false" },
      { kind: "tool_result", tool: "shell", text: "exit 1: " },
      { kind: "tool_use", tool: "docs.search", text: '{"q":"x"}' },
      { kind: "tool_result", tool: "docs.search", text: "error: down" },
    ]);
  });

  test("malformed and unknown lines are skipped, never fatal", () => {
    const { events, outcome } = parse([
      STARTED,
      "not json",
      "[1,2]",
      "",
      '{"type":"mystery"}',
      '{"type":"item.completed"}',
      TURN,
      message("item_1", "done"),
      COMPLETED,
    ]);
    assert.deepEqual(
      events.filter((event) => event.kind === "other").map((event) => event.text),
      ["not json", "[1,2]", "mystery", "item"],
    );
    assert.equal(outcome.finalMessage, "done");
  });

  test("usage limit: rate_limit with the reset time Codex printed (another day, or later today)", () => {
    const later =
      "You’ve hit your usage limit. Upgrade to Pro (https://chatgpt.com/explore/pro), visit https://chatgpt.com/settings/usage to purchase more credits or try again at Mar 19th, 2030 5:46 PM.";
    const { outcome } = parse([STARTED, TURN, ...failedTurn(later)], { code: 1, signal: null });
    assert.equal(outcome.sawResult, true);
    assert.equal(outcome.finalMessage, null);
    assert.deepEqual(outcome.error, { kind: "rate_limit", message: later });
    assert.deepEqual(outcome.limit, { message: later, resetAt: new Date(2030, 2, 19, 17, 46) });

    const today = parse([STARTED, TURN, ...failedTurn("You’ve hit your usage limit. Try again at 5:46 PM.")], {
      code: 1,
      signal: null,
    });
    assert.deepEqual(today.outcome.limit?.resetAt, new Date(2030, 2, 17, 17, 46));
    const unknown = parse(
      [STARTED, TURN, ...failedTurn("You’ve hit your usage limit. Upgrade to Plus or try again later.")],
      { code: 1, signal: null },
    );
    assert.equal(unknown.outcome.error?.kind, "rate_limit");
    assert.equal(unknown.outcome.limit?.resetAt, null);
  });

  test("codexResetTime reads the ordinal day forms Codex writes", () => {
    assert.deepEqual(codexResetTime("try again at Jan 1st, 2031 9:05 AM.", NOW), new Date(2031, 0, 1, 9, 5));
    assert.deepEqual(codexResetTime("try again at Apr 22nd, 2030 12:00 PM.", NOW), new Date(2030, 3, 22, 12, 0));
    assert.equal(codexResetTime("try again later.", NOW), null);
  });

  test("HTTP failures: 429 is a limit, 401 is auth, 5xx is api", () => {
    const cases: Array<[string, string]> = [
      ["exceeded retry limit, last status: 429 Too Many Requests", "rate_limit"],
      [
        "unexpected status 401 Unauthorized: Incorrect API key provided: test., url: http://127.0.0.1:1/v1/responses",
        "auth",
      ],
      ["We’re currently experiencing high demand, which may cause temporary errors.", "api"],
      ["stream disconnected before completion: connection reset", "api"],
      ["Codex ran out of room in the model's context window.", "other"],
    ];
    for (const [text, kind] of cases) {
      const { outcome } = parse([STARTED, TURN, ...failedTurn(text)], { code: 1, signal: null });
      assert.equal(outcome.error?.kind, kind, text);
      assert.equal(outcome.limit === undefined, kind !== "rate_limit", text);
    }
  });

  test("ended while Codex was retrying: the retried failure is the cause", () => {
    const retry = JSON.stringify({
      type: "error",
      message: "Reconnecting... 2/5 (exceeded retry limit, last status: 429 Too Many Requests)",
    });
    const { outcome } = parse([STARTED, TURN, retry], { code: null, signal: "SIGTERM" });
    assert.equal(outcome.sawResult, false);
    assert.deepEqual(outcome.error, {
      kind: "rate_limit",
      message: "exceeded retry limit, last status: 429 Too Many Requests",
    });
  });

  test("ended by a signal mid-tool: no result, no final message, no invented error", () => {
    const { outcome } = parse([STARTED, TURN, message("item_0", "<promise>DONE</promise>"), SHELL_STARTED], {
      code: 143,
      signal: null,
    });
    assert.deepEqual(outcome, { finalMessage: null, sawResult: false, sessionId: THREAD });
    const interrupted = parse(
      [STARTED, TURN, SHELL_STARTED],
      { code: 1, signal: null },
      "WARNING: proceeding, even though we could not create PATH aliases\nERROR codex_core::session: failed to record rollout items\n",
    );
    assert.deepEqual(interrupted.outcome.error, {
      kind: "other",
      message: "ERROR codex_core::session: failed to record rollout items",
    });
  });
});
