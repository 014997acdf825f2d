// The one step that checks rules spanning several options (src/config/check-settings.ts): each rule as a
// table row, the agent it settles, and a known-good row that passes.
import { test } from "node:test";
import assert from "node:assert/strict";
import { checkSettings, type GivenAgent } from "../../src/config/check-settings.js";
import { defaultSettings, type RunSettings } from "../../src/config/run-options.js";

const none: GivenAgent = { trailing: null, agentGiven: false };

const refusals: Array<[string, Partial<RunSettings>, GivenAgent, RegExp]> = [
  ["--parent by hand", { parent: "p" }, none, /^--parent is set by a --parallel run/],
  ["--resolve by hand", { resolve: true }, none, /^--resolve is set by a --parallel run/],
  ["-- with nothing after it", {}, { trailing: [], agentGiven: false }, /^-- must be followed by a command/],
  [
    "--agent-cmd and --",
    { agentCmd: ["a"] },
    { trailing: ["b"], agentGiven: false },
    /^give the command with --agent-cmd or after --, not both$/,
  ],
  [
    "--agent codex with a command",
    { agent: "codex" },
    { trailing: ["b"], agentGiven: true },
    /^--agent codex does not take a command/,
  ],
  ["--agent command without one", { agent: "command" }, none, /^--agent command needs --agent-cmd CMD or -- CMD ARGS$/],
  ["a fallback agent twice", { fallbackAgents: ["codex", "codex"] }, none, /^--fallback-agent: .*got codex twice$/],
  [
    "the main agent as its own fallback",
    { fallbackAgents: ["claude"] },
    none,
    /^--fallback-agent: .*got claude twice$/,
  ],
  ["--commit iteration on your checkout", { commit: "iteration" }, none, /^--commit iteration needs --worktree/],
  ["--task-index without --tasks", { taskIndex: 0 }, none, /^--task-index needs --tasks FILE/],
  [
    "--task-index with --task",
    { taskIndex: 0, tasks: "t.md", task: "A" },
    none,
    /^--task-index and --task do not go together/,
  ],
  [
    "--task-index with --parallel",
    { taskIndex: 0, tasks: "t.md", parallel: 2 },
    none,
    /^--parallel and --task-index do not go together/,
  ],
  ["--task without --tasks", { task: "A" }, none, /^--task needs --tasks FILE/],
  ["--parallel without --tasks", { parallel: 2 }, none, /^--parallel needs --tasks FILE/],
  [
    "--parallel with --task",
    { parallel: 2, tasks: "t.md", task: "A" },
    none,
    /^--parallel and --task do not go together/,
  ],
];

for (const [name, patch, given, message] of refusals) {
  test(`refused: ${name}`, () => {
    const checked = checkSettings({ ...defaultSettings(), ...patch }, given);
    assert.equal(checked.ok, false);
    if (!checked.ok) assert.match(checked.message, message);
  });
}

test("a command after -- makes the command agent; ralph.yaml's agent gives way to it, a flag's does not", () => {
  const checked = checkSettings(
    { ...defaultSettings(), agent: "codex" },
    { trailing: ["./agent.sh", "-x"], agentGiven: false },
  );
  assert.deepEqual(checked.ok && [checked.settings.agent, checked.settings.agentCmd], [
    "command",
    ["./agent.sh", "-x"],
  ]);
});

test("known-good: settings that break no rule pass unchanged but for the agent", () => {
  const settings: RunSettings = {
    ...defaultSettings(),
    tasks: "prd.json",
    parallel: 2,
    commit: "iteration",
    fallbackAgents: ["codex"],
  };
  assert.deepEqual(checkSettings(settings, none), { ok: true, settings });
});
