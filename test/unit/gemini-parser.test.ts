// The Gemini CLI stream-json parser, fed lines recorded from Gemini CLI 0.61.0.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { createGeminiParser } from "../../src/agents/gemini-parser.js";
import type { AgentEvent, AgentOutcome } from "../../src/agents/types.js";

const SESSION = "e3fd3899-fa68-4f13-81a2-8c1a322c6192";
const TS = '"timestamp":"2026-11-30T05:40:36.324Z"';
const INIT = `{"type":"init",${TS},"session_id":"${SESSION}","model":"gemini-2.5-pro"}`;
const user = (text: string) => JSON.stringify({ type: "message", timestamp: "t", role: "user", content: text });
const delta = (text: string) =>
  JSON.stringify({ type: "message", timestamp: "t", role: "assistant", content: text, delta: true });
const WRITE = `{"type":"tool_use",${TS},"tool_name":"write_file","tool_id":"write_file__write_file_1796017236447_0","parameters":{"file_path":"/p/hello.txt","content":"hello\\n"}}`;
const WRITE_DONE = `{"type":"tool_result",${TS},"tool_id":"write_file__write_file_1796017236447_0","status":"success"}`;
const SHELL = `{"type":"tool_use",${TS},"tool_name":"run_shell_command","tool_id":"run_shell_command__run_shell_command_1796017236874_0","parameters":{"command":"echo shell-ran > ran.txt; cat hello.txt"}}`;
const SHELL_DONE = `{"type":"tool_result",${TS},"tool_id":"run_shell_command__run_shell_command_1796017236874_0","status":"success","output":"hello"}`;
const SUCCESS = `{"type":"result",${TS},"status":"success","stats":{"total_tokens":360,"input_tokens":300,"output_tokens":60,"cached":30,"input":270,"duration_ms":739,"tool_calls":2,"models":{"gemini-2.5-pro":{"total_tokens":360,"input_tokens":300,"output_tokens":60,"cached":30,"input":270}}}}`;
const errorResult = (message: string) =>
  JSON.stringify({
    type: "result",
    timestamp: "t",
    status: "error",
    error: { type: "unknown", message },
    stats: {
      total_tokens: 0,
      input_tokens: 0,
      output_tokens: 0,
      cached: 0,
      input: 0,
      duration_ms: 0,
      tool_calls: 0,
      models: {},
    },
  });

const NOW = new Date("2030-03-17T10:00:00Z");
const PROMPT = "Finish the task, then say <promise>DONE</promise>.";

function parse(
  lines: string[],
  exit: { code: number | null; signal: string | null } = { code: 0, signal: null },
  stderr = "",
): { events: AgentEvent[]; outcome: AgentOutcome } {
  const parser = createGeminiParser({ prompt: PROMPT, now: () => NOW });
  const events = lines.flatMap((line) => parser.line(line));
  return { events, outcome: parser.finish(stderr, exit) };
}

describe("gemini parser", () => {
  test("a run with two tools: events, final message, session, tokens with cached input apart", () => {
    const { events, outcome } = parse([
      INIT,
      user(PROMPT),
      WRITE,
      WRITE_DONE,
      SHELL,
      SHELL_DONE,
      delta("Wrote it. <promise>DONE</promise>"),
      SUCCESS,
    ]);

    assert.deepEqual(events, [
      { kind: "init", sessionId: SESSION, text: "gemini-2.5-pro" },
      { kind: "tool_use", tool: "write_file", text: "/p/hello.txt" },
      { kind: "tool_result", tool: "write_file", text: "success" },
      { kind: "tool_use", tool: "run_shell_command", text: "echo shell-ran > ran.txt; cat hello.txt" },
      { kind: "tool_result", tool: "run_shell_command", text: "hello" },
      { kind: "text", text: "Wrote it. <promise>DONE</promise>" },
      { kind: "result", text: "Wrote it. <promise>DONE</promise>", sessionId: SESSION },
    ]);
    assert.deepEqual(outcome, {
      finalMessage: "Wrote it. <promise>DONE</promise>",
      sawResult: true,
      sessionId: SESSION,
      tokens: { input: 270, output: 60, cacheRead: 30, cacheWrite: 0 },
    });
  });

  test("streamed deltas are joined exactly and become one text event", () => {
    const { events, outcome } = parse([
      INIT,
      delta("Wrote "),
      delta("it. <promise>DO"),
      delta("NE</promise>"),
      SUCCESS,
    ]);
    assert.deepEqual(
      events.filter((event) => event.kind === "text"),
      [{ kind: "text", text: "Wrote it. <promise>DONE</promise>" }],
    );
    assert.equal(outcome.finalMessage, "Wrote it. <promise>DONE</promise>");
  });

  test("the echoed prompt and text before a tool call are never the final message", () => {
    const { outcome } = parse([
      INIT,
      user(PROMPT),
      delta("<promise>DONE</promise> after this: "),
      SHELL,
      SHELL_DONE,
      SUCCESS,
    ]);
    assert.equal(outcome.finalMessage, null);
    assert.equal(outcome.sawResult, true);
  });

  test("malformed and unknown lines are skipped, never fatal", () => {
    const { events, outcome } = parse([
      INIT,
      "not json",
      "null",
      '{"type":"mystery"}',
      '{"type":"tool_result"}',
      delta("ok"),
      SUCCESS,
    ]);
    assert.deepEqual(
      events.filter((event) => event.kind === "other").map((event) => event.text),
      ["not json", "null", "mystery"],
    );
    assert.equal(outcome.finalMessage, "ok");
  });

  test("quota errors are limits; a retry delay gives the reset time", () => {
    const daily =
      "[API Error: You have exhausted your daily quota on this model.]\nPlease wait and try again later. To increase your limits, request a quota increase through AI Studio, or switch to another /auth method";
    const dailyRun = parse([INIT, user("x"), errorResult(daily)], { code: 1, signal: null });
    assert.equal(dailyRun.outcome.sawResult, true);
    assert.equal(dailyRun.outcome.finalMessage, null);
    assert.deepEqual(dailyRun.outcome.error, { kind: "rate_limit", message: daily });
    assert.deepEqual(dailyRun.outcome.limit, { message: daily, resetAt: null });
    assert.deepEqual(dailyRun.outcome.tokens, { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 });

    const delayed =
      "[API Error: Resource has been exhausted (e.g. check quota).\nSuggested retry after 3600s.]\nPlease wait and try again later.";
    const delayedRun = parse([INIT, errorResult(delayed)], { code: 1, signal: null });
    assert.equal(delayedRun.outcome.error?.kind, "rate_limit");
    assert.deepEqual(delayedRun.outcome.limit?.resetAt, new Date(NOW.getTime() + 3600_000));
    const perMinute = parse([INIT, errorResult("[API Error: Quota exceeded for metric. Please retry in 23.5s.]")], {
      code: 1,
      signal: null,
    });
    assert.deepEqual(perMinute.outcome.limit?.resetAt, new Date(NOW.getTime() + 23_500));
  });

  test("a bad key is auth, other API errors are api, neither is a limit", () => {
    const badKey =
      '[API Error: {"error":{"code":400,"message":"API key not valid. Please pass a valid API key.","status":"INVALID_ARGUMENT","details":[{"reason":"API_KEY_INVALID"}]}}]';
    const cases: Array<[string, string]> = [
      [badKey, "auth"],
      ["[API Error: Permission denied: PERMISSION_DENIED]", "auth"],
      ['[API Error: {"error":{"code":500,"message":"Internal error","status":"INTERNAL"}}]', "api"],
      ["Reached max session turns for this session.", "other"],
    ];
    for (const [message, kind] of cases) {
      const { outcome } = parse([INIT, errorResult(message)], { code: 1, signal: null });
      assert.equal(outcome.error?.kind, kind, message);
      assert.equal(outcome.limit, undefined, message);
    }
  });

  test("no result line: stderr explains a failed start; an interrupted run invents no error", () => {
    const stderr = [
      "YOLO mode is enabled. All tool calls will be automatically approved.",
      'Approval mode overridden to "default" because the current folder is not trusted.',
      "\u001b[31mGemini CLI is not running in a trusted directory. To proceed, either use `--skip-trust`.\u001b[0m",
    ].join("\n");
    const untrusted = parse([], { code: 55, signal: null }, stderr);
    assert.deepEqual(untrusted.outcome, {
      finalMessage: null,
      sawResult: false,
      error: {
        kind: "other",
        message: "Gemini CLI is not running in a trusted directory. To proceed, either use `--skip-trust`.",
      },
    });
    // SIGINT while a tool runs: Gemini CLI exits 0 without a result line.
    const interrupted = parse(
      [INIT, user("x"), delta("<promise>DONE</promise>"), SHELL],
      { code: 0, signal: null },
      "YOLO mode is enabled.\n",
    );
    assert.deepEqual(interrupted.outcome, { finalMessage: null, sawResult: false, sessionId: SESSION });
  });
});
