// The OpenCode `run --format json` parser, fed lines recorded from OpenCode 1.18.33.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { createOpencodeParser } from "../../src/agents/opencode-parser.js";
import type { AgentEvent, AgentOutcome } from "../../src/agents/types.js";

const SESSION = "ses_dd4fc3c0fffegmQhgeMbdyOMN3";
const line = (type: string, part: Record<string, unknown>) =>
  JSON.stringify({
    type,
    timestamp: 1796018002759,
    sessionID: SESSION,
    part: { sessionID: SESSION, messageID: "msg_1", ...part },
  });
const STEP = line("step_start", { id: "prt_1", type: "step-start" });
const finish = (reason: string, cost = 0.00039) =>
  line("step_finish", {
    id: "prt_2",
    reason,
    type: "step-finish",
    tokens: { total: 120, input: 90, output: 20, reasoning: 0, cache: { write: 0, read: 10 } },
    cost,
  });
const text = (value: string) => line("text", { id: "prt_3", type: "text", text: value, time: { start: 1, end: 2 } });
const WRITE = JSON.stringify({
  type: "tool_use",
  timestamp: 1796018002760,
  sessionID: SESSION,
  part: {
    type: "tool",
    tool: "write",
    callID: "call_1",
    state: {
      status: "completed",
      input: { filePath: "/p/hello.txt", content: "hello\n" },
      output: "Wrote file successfully.",
      metadata: { exists: false },
      title: "p/hello.txt",
      time: { start: 1, end: 2 },
    },
    id: "prt_4",
    sessionID: SESSION,
    messageID: "msg_1",
  },
});
const bash = (status: "completed" | "error") =>
  JSON.stringify({
    type: "tool_use",
    timestamp: 1,
    sessionID: SESSION,
    part: {
      type: "tool",
      tool: "bash",
      callID: "call_2",
      state:
        status === "completed"
          ? {
              status,
              input: { command: "cat hello.txt", description: "Show it" },
              output: "hello\n",
              metadata: { exit: 0 },
            }
          : { status, input: { command: "cat nope" }, error: "No such file" },
    },
  });
const apiError = (statusCode: number, message: string, headers: Record<string, string> = {}) =>
  JSON.stringify({
    type: "error",
    timestamp: 1,
    sessionID: SESSION,
    error: {
      name: "APIError",
      data: {
        message,
        statusCode,
        isRetryable: statusCode === 429,
        responseHeaders: { "content-type": "application/json", ...headers },
        responseBody: JSON.stringify({ error: { message } }),
      },
    },
  });

const NOW = new Date("2030-03-17T10:00:00Z");

function parse(
  lines: string[],
  exit: { code: number | null; signal: string | null } = { code: 0, signal: null },
  stderr = "",
): { events: AgentEvent[]; outcome: AgentOutcome } {
  const parser = createOpencodeParser({ prompt: "Say <promise>DONE</promise> when done.", now: () => NOW });
  const events = lines.flatMap((entry) => parser.line(entry));
  return { events, outcome: parser.finish(stderr, exit) };
}

describe("opencode parser", () => {
  test("a run of three steps: events, final message, session, summed tokens and cost, steps as turns", () => {
    const { events, outcome } = parse([
      STEP,
      WRITE,
      finish("tool-calls"),
      STEP,
      bash("completed"),
      finish("tool-calls"),
      STEP,
      text("Wrote it. <promise>DONE</promise>"),
      finish("stop"),
    ]);

    assert.deepEqual(events, [
      { kind: "init", sessionId: SESSION },
      { kind: "tool_use", tool: "write", text: "/p/hello.txt" },
      { kind: "tool_result", tool: "write", text: "Wrote file successfully." },
      { kind: "tool_use", tool: "bash", text: "cat hello.txt" },
      { kind: "tool_result", tool: "bash", text: "hello\n" },
      { kind: "text", text: "Wrote it. <promise>DONE</promise>" },
      { kind: "result", text: "Wrote it. <promise>DONE</promise>", sessionId: SESSION },
    ]);
    assert.equal(outcome.finalMessage, "Wrote it. <promise>DONE</promise>");
    assert.equal(outcome.sawResult, true);
    assert.equal(outcome.sessionId, SESSION);
    assert.deepEqual(outcome.tokens, { input: 270, output: 60, cacheRead: 30, cacheWrite: 0 });
    assert.ok(Math.abs((outcome.costUsd ?? 0) - 0.00117) < 1e-12, String(outcome.costUsd));
    assert.equal(outcome.turns, 3);
    assert.equal(outcome.error, undefined);
  });

  test("text of a step that went on to call tools is not the final message", () => {
    const { outcome } = parse([
      STEP,
      text("<promise>DONE</promise> once this runs"),
      bash("error"),
      finish("tool-calls"),
      STEP,
      text("Still failing."),
      finish("stop"),
    ]);
    assert.equal(outcome.finalMessage, "Still failing.");
  });

  test("a failed tool call becomes an error tool result", () => {
    const { events } = parse([STEP, bash("error")]);
    assert.deepEqual(events.slice(1), [
      { kind: "tool_use", tool: "bash", text: "cat nope" },
      { kind: "tool_result", tool: "bash", text: "error: No such file" },
    ]);
  });

  test("ended mid-step (a signal during a tool): no result and no final message", () => {
    const { outcome } = parse([STEP, text("<promise>DONE</promise>"), finish("tool-calls"), STEP], {
      code: 143,
      signal: null,
    });
    assert.equal(outcome.sawResult, false);
    assert.equal(outcome.finalMessage, null);
    assert.equal(outcome.error, undefined);
  });

  test("malformed and unknown lines are skipped, never fatal", () => {
    const { events, outcome } = parse([
      STEP,
      "not json",
      "42",
      '{"type":"mystery"}',
      '{"type":"tool_use"}',
      text("ok"),
      finish("stop"),
    ]);
    assert.deepEqual(
      events.filter((event) => event.kind === "other").map((event) => event.text),
      ["not json", "42", "mystery"],
    );
    assert.equal(outcome.finalMessage, "ok");
  });

  test("401 is auth; 429 is a limit with the reset from retry-after; a 500 is api; an unknown error is other", () => {
    const auth = parse([apiError(401, "Incorrect API key provided: test.")], { code: 1, signal: null });
    assert.deepEqual(auth.outcome.error, { kind: "auth", message: "APIError: Incorrect API key provided: test." });
    assert.equal(auth.outcome.sawResult, true);
    assert.equal(auth.outcome.finalMessage, null);

    const seconds = parse([apiError(429, "Rate limit reached for requests.", { "retry-after": "20" })], {
      code: 1,
      signal: null,
    });
    assert.equal(seconds.outcome.error?.kind, "rate_limit");
    assert.deepEqual(seconds.outcome.limit, {
      message: "APIError: Rate limit reached for requests.",
      resetAt: new Date(NOW.getTime() + 20_000),
    });
    const date = parse([apiError(429, "Slow down.", { "Retry-After": "Mon, 18 Mar 2030 00:00:00 GMT" })], {
      code: 1,
      signal: null,
    });
    assert.deepEqual(date.outcome.limit?.resetAt, new Date("2030-03-18T00:00:00Z"));
    const text = parse([apiError(429, "Rate limit reached for requests. Please try again in 1.5s.")], {
      code: 1,
      signal: null,
    });
    assert.deepEqual(text.outcome.limit?.resetAt, new Date(NOW.getTime() + 1500));

    assert.equal(parse([apiError(500, "boom")], { code: 1, signal: null }).outcome.error?.kind, "api");
    const unknown = JSON.stringify({
      type: "error",
      timestamp: 1,
      sessionID: SESSION,
      error: { name: "UnknownError", data: { message: "Unexpected server error. Check server logs for details." } },
    });
    assert.deepEqual(parse([unknown], { code: 1, signal: null }).outcome.error, {
      kind: "other",
      message: "UnknownError: Unexpected server error. Check server logs for details.",
    });
    const provider = JSON.stringify({
      type: "error",
      timestamp: 1,
      sessionID: SESSION,
      error: { name: "ProviderAuthError", data: { providerID: "fake", message: "missing key" } },
    });
    assert.equal(parse([provider], { code: 1, signal: null }).outcome.error?.kind, "auth");
  });

  test("an error after a finished step still fails the run", () => {
    const { outcome } = parse([STEP, text("done <promise>DONE</promise>"), finish("stop"), apiError(500, "boom")], {
      code: 1,
      signal: null,
    });
    assert.equal(outcome.finalMessage, null);
    assert.equal(outcome.error?.kind, "api");
  });
});
