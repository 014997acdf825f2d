// The agent environment (no nesting markers) and secret redaction for logs.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { agentEnvironment, redactArgv, redactSecrets, SCRUBBED_VARIABLES } from "../../src/agents/env-scrub.js";

const KEY = "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789";

describe("agentEnvironment", () => {
  test("drops the markers of an enclosing agent session and keeps everything else", () => {
    const parent: NodeJS.ProcessEnv = {
      PATH: "/usr/bin",
      HOME: "/home/u",
      ANTHROPIC_API_KEY: KEY,
      CODEX_HOME: "/home/u/.codex",
      CLAUDECODE: "1",
      CLAUDE_CODE_ENTRYPOINT: "cli",
      CLAUDE_CODE_SSE_PORT: "1234",
      CLAUDE_CODE_SESSION_ID: "abc",
      CLAUDE_CODE_CHILD_SESSION: "1",
      AI_AGENT: "claude-code_2-1-197_agent",
      CODEX_SANDBOX: "seatbelt",
      GEMINI_CLI: "1",
    };
    const env = agentEnvironment(parent, { RALPH_ITERATION: "2" });
    assert.deepEqual(env, {
      PATH: "/usr/bin",
      HOME: "/home/u",
      ANTHROPIC_API_KEY: KEY,
      CODEX_HOME: "/home/u/.codex",
      RALPH_ITERATION: "2",
    });
    assert.equal(parent.CLAUDECODE, "1", "the parent is not modified");
    for (const name of ["CLAUDECODE", "CLAUDE_CODE_ENTRYPOINT", "CLAUDE_CODE_SSE_PORT"])
      assert.ok(SCRUBBED_VARIABLES.includes(name));
  });

  test("extra wins, even for a scrubbed name set on purpose", () => {
    assert.deepEqual(agentEnvironment({ A: "1", CLAUDECODE: "1" }, { A: "2", CLAUDECODE: "0" }), {
      A: "2",
      CLAUDECODE: "0",
    });
  });
});

describe("redactSecrets", () => {
  test("replaces values of credential variables and key-shaped strings", () => {
    const env: NodeJS.ProcessEnv = {
      ANTHROPIC_API_KEY: KEY,
      GITHUB_TOKEN: "tok-1234567890abcdef",
      MY_SECRET: "hunter2hunter2",
      SHORT_TOKEN: "abc",
      PATH: "/usr/bin:/bin",
    };
    const text = `key=${KEY} gh=tok-1234567890abcdef s=hunter2hunter2 short=abc path=/usr/bin:/bin other=sk-proj-ZZZZZZZZZZZZZZZZZZZZZZZZ`;
    assert.equal(
      redactSecrets(text, env),
      "key=[REDACTED] gh=[REDACTED] s=[REDACTED] short=abc path=/usr/bin:/bin other=[REDACTED]",
    );
  });

  test("leaves text without secrets unchanged", () => {
    assert.equal(redactSecrets("nothing to see: sk-short", { HOME: "/home/u" }), "nothing to see: sk-short");
  });
});

describe("redactArgv", () => {
  test("redacts secret flags, NAME=value secrets and key-shaped arguments only", () => {
    assert.deepEqual(
      redactArgv([
        "env",
        "ANTHROPIC_API_KEY=xyz",
        "claude",
        "--api-key",
        "plain-value",
        "--token=abc",
        "-p",
        `use ${KEY}`,
        "--model",
        "sonnet",
        "PATH=/bin",
      ]),
      [
        "env",
        "ANTHROPIC_API_KEY=[REDACTED]",
        "claude",
        "--api-key",
        "[REDACTED]",
        "--token=[REDACTED]",
        "-p",
        "use [REDACTED]",
        "--model",
        "sonnet",
        "PATH=/bin",
      ],
    );
  });
});
