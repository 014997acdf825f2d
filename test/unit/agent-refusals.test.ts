// An agent CLI that refuses its arguments is an error no retry can fix (kind "config"): the run ends at once
// with it. The texts are what the pinned CLIs print, recorded from Claude Code 2.1.197, Codex 0.171.0,
// Gemini CLI 0.61.0 and OpenCode 1.18.33 given a bad argument.
import { test } from "node:test";
import assert from "node:assert/strict";
import { adapterFor } from "../../src/agents/adapters.js";
import type { AgentName } from "../../src/agents/types.js";

const CODEX_WARNING =
  'WARNING: proceeding, even though we could not create PATH aliases: Refusing to create helper binaries under temporary dir "/tmp"';
const GEMINI_USAGE =
  "Usage: gemini [options] [command]\nGemini CLI - Defaults to interactive mode. Use -p/--prompt for non-interactive (headless) mode.\nCommands:\n  gemini mcp                   Manage MCP servers\n";
const OPENCODE_USAGE =
  "opencode run [message..]\n\nrun opencode with a message\n\nPositionals:\n  message  message to send                                                     [array] [default: []]\n";

const REFUSALS: Array<[AgentName, string, number, RegExp]> = [
  [
    "claude",
    "--dangerously-skip-permissions cannot be used with root/sudo privileges for security reasons\n",
    1,
    /root\/sudo.*IS_SANDBOX=1/,
  ],
  [
    "claude",
    "error: option '--permission-mode <mode>' argument 'nope' is invalid. Allowed choices are acceptEdits, auto, bypassPermissions, default, dontAsk, plan.\n",
    1,
    /--permission-mode/,
  ],
  ["claude", "error: option '--model <model>' argument missing\n", 1, /--model/],
  [
    "claude",
    "Error processing --setting-sources: Invalid setting source: nope. Valid options are: user, project, local\n",
    1,
    /--setting-sources/,
  ],
  ["claude", "Error: When using --print, --output-format=stream-json requires --verbose\n", 1, /requires --verbose/],
  ["claude", "error: unknown option '--bogus-flag'\n", 1, /--bogus-flag/],
  [
    "codex",
    `${CODEX_WARNING}\nerror: invalid value 'nope' for '--sandbox <SANDBOX_MODE>'\n  [possible values: read-only, workspace-write, danger-full-access]\n`,
    2,
    /--sandbox/,
  ],
  [
    "codex",
    `${CODEX_WARNING}\nerror: unexpected argument '--bogus' found\n\n  tip: to pass '--bogus' as a value, use '-- --bogus'\n`,
    2,
    /--bogus/,
  ],
  ["codex", `${CODEX_WARNING}\nError parsing -c overrides: Invalid override (missing '='): nope\n`, 1, /-c overrides/],
  ["codex", `${CODEX_WARNING}\nerror: a value is required for '--model <MODEL>' but none was supplied\n`, 2, /--model/],
  ["gemini", `Unknown argument: bogus\n${GEMINI_USAGE}`, 1, /Unknown argument: bogus/],
  [
    "gemini",
    `Invalid values:\n  Argument: approval-mode, Given: "nope", Choices: "default", "auto_edit", "yolo", "plan"\n${GEMINI_USAGE}`,
    1,
    /approval-mode/,
  ],
  [
    "gemini",
    `Cannot use both --yolo (-y) and --approval-mode together. Use --approval-mode=yolo instead.\n${GEMINI_USAGE}`,
    1,
    /--yolo/,
  ],
  ["gemini", `Not enough arguments following: model\n${GEMINI_USAGE}`, 1, /model/],
  ["opencode", OPENCODE_USAGE, 1, /refused its arguments/],
];

for (const [agent, stderr, code, named] of REFUSALS) {
  test(`${agent}: "${stderr.split("\n").find((line) => line && !line.startsWith("WARNING"))}" is a refusal no retry fixes`, () => {
    const parser = adapterFor(agent).parser({ prompt: "do it" });
    const outcome = parser.finish(stderr, { code, signal: null });
    assert.equal(outcome.error?.kind, "config", JSON.stringify(outcome.error));
    assert.match(outcome.error?.message ?? "", named);
  });
}

test("control: a failure that is no refusal stays retryable", () => {
  for (const agent of ["claude", "codex", "gemini", "opencode"] as const) {
    const outcome = adapterFor(agent)
      .parser({ prompt: "do it" })
      .finish("something went wrong for a moment\n", { code: 1, signal: null });
    assert.notEqual(outcome.error?.kind, "config", agent);
  }
});
