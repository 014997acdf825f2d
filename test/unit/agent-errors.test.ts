// Errors no retry can fix, told apart from those a retry may fix; live token counts; --agent-args.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { claudeArgv } from "../../src/agents/claude.js";
import { codexArgv } from "../../src/agents/codex.js";
import { createClaudeParser } from "../../src/agents/claude-parser.js";
import { firstLineFailure } from "../../src/agents/json-fields.js";
import type { AgentEvent, AgentOutcome } from "../../src/agents/types.js";

function parse(
  lines: unknown[],
  stderr = "",
  exit: { code: number | null; signal: string | null } = { code: 1, signal: null },
): { events: AgentEvent[]; outcome: AgentOutcome } {
  const parser = createClaudeParser({ prompt: "Do the task.", now: () => new Date("2026-11-30T12:00:00Z") });
  const events = lines.flatMap((line) => parser.line(JSON.stringify(line)));
  return { events, outcome: parser.finish(stderr, exit) };
}

const retry = (status: number, error: string) => ({
  type: "system",
  subtype: "api_retry",
  attempt: 1,
  max_retries: 10,
  retry_delay_ms: 600,
  error_status: status,
  error,
});
const interrupted = {
  type: "result",
  subtype: "error_during_execution",
  is_error: true,
  terminal_reason: "aborted_streaming",
  session_id: "s",
};

describe("Claude Code's api_retry lines", () => {
  test("401: a retry event marked fatal, and the outcome is an auth failure even after an interrupted result", () => {
    const { events, outcome } = parse([retry(401, "authentication_failed"), interrupted]);
    const event = events[0];
    assert.equal(event?.kind, "retry");
    assert.equal(event?.text, "API retry 1/10 in 0.6s after 401 authentication_failed");
    assert.match(event?.fatal ?? "", /rejected Claude Code's credentials \(401 authentication_failed\)/);
    assert.equal(outcome.error?.kind, "auth");
    assert.equal(outcome.limit, undefined);
  });

  test("403 is fatal too; 404 is a configuration error (the model name)", () => {
    assert.equal(parse([retry(403, "permission_error")]).outcome.error?.kind, "auth");
    const notFound = parse([retry(404, "not_found_error")]);
    assert.ok(notFound.events[0]?.fatal);
    assert.equal(notFound.outcome.error?.kind, "config");
  });

  test("control: 529 and 429 retries are not fatal (waiting may fix them)", () => {
    for (const status of [529, 500, 429]) {
      const { events, outcome } = parse([retry(status, "overloaded")]);
      assert.equal(events[0]?.kind, "retry");
      assert.equal(events[0]?.fatal, undefined, String(status));
      assert.notEqual(outcome.error?.kind, "auth");
      assert.notEqual(outcome.error?.kind, "config");
    }
  });

  test("an unknown model in an error result is a configuration error", () => {
    const result = {
      type: "result",
      subtype: "success",
      is_error: true,
      api_error_status: 404,
      result: "API Error: 404 model: claude-nope not found",
    };
    assert.equal(parse([result]).outcome.error?.kind, "config");
  });
});

describe("live token counts", () => {
  const assistant = (id: string, input: number, output: number, text: string) => ({
    type: "assistant",
    parent_tool_use_id: null,
    message: {
      id,
      model: "m",
      usage: { input_tokens: input, output_tokens: output, cache_read_input_tokens: 10 },
      content: [{ type: "text", text }],
    },
  });

  test("each API call counts once, however many lines repeat its usage; calls add up", () => {
    const { events } = parse(
      [assistant("a", 100, 5, "one"), assistant("a", 100, 20, "two"), assistant("b", 50, 7, "three")],
      "",
      { code: 0, signal: null },
    );
    assert.deepEqual(
      events.map((event) => event.tokens),
      [
        { input: 110, output: 5 },
        { input: 110, output: 20 },
        { input: 170, output: 27 },
      ],
    );
  });
});

describe("first-line failures of the other agents", () => {
  const failed = { code: 2, signal: null };
  test("a bad flag anywhere in the output is a configuration error; an auth message is auth; else other", () => {
    assert.equal(
      firstLineFailure("usage: codex exec\nerror: unexpected argument '--bogus' found", failed, 300)?.kind,
      "config",
    );
    assert.equal(firstLineFailure("Error: Unknown model gpt-nope", failed, 300)?.kind, "config");
    assert.equal(firstLineFailure("401 Unauthorized", failed, 300)?.kind, "auth");
    assert.equal(firstLineFailure("something else broke", failed, 300)?.kind, "other");
    assert.equal(firstLineFailure("error: unknown option", { code: 0, signal: null }, 300), null);
  });
});

describe("--agent-args", () => {
  const base = { prompt: "p", cwd: "/p", env: {}, scratchDir: "/s" };
  test("are passed as words after ralph's own flags; a permission mode replaces --dangerously-skip-permissions", () => {
    const plain = claudeArgv(base, "claude");
    assert.ok(plain.includes("--dangerously-skip-permissions"));
    const args = ["--allowedTools", "Bash(npm *)", "--mcp-config", "a b.json"];
    assert.deepEqual(claudeArgv({ ...base, agentArgs: args }, "claude").slice(-4), args);
    const mode = claudeArgv({ ...base, agentArgs: ["--permission-mode", "acceptEdits"] }, "claude");
    assert.ok(!mode.includes("--dangerously-skip-permissions"));
    assert.deepEqual(mode.slice(-2), ["--permission-mode", "acceptEdits"]);
    assert.ok(
      !claudeArgv({ ...base, agentArgs: ["--permission-mode=plan"] }, "claude").includes(
        "--dangerously-skip-permissions",
      ),
    );
  });

  test("codex keeps the prompt marker last and drops its bypass flag for a sandbox choice", () => {
    const argv = codexArgv({ ...base, agentArgs: ["--sandbox", "workspace-write"] }, "codex");
    assert.equal(argv.at(-1), "-");
    assert.ok(!argv.includes("--dangerously-bypass-approvals-and-sandbox"));
  });
});
