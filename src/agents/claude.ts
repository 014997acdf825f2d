// The Claude Code adapter: headless `claude -p` with stream-json output and the prompt on stdin.
import { createClaudeParser } from "./claude-parser.js";
import { binaryFrom } from "./json-fields.js";
import { permissionFlags } from "./permission-mode.js";
import type { AgentAdapter, InvocationInput } from "./types.js";

/** Environment variable naming the Claude Code binary to run (default `claude` on PATH). */
export const CLAUDE_BIN_VARIABLE = "RALPH_CLAUDE_BIN";

// Claude Code rejects a budget of 0, and a cap must never round up past what is left.
function budgetFlag(remainingUsd: number | undefined): string[] {
  if (remainingUsd === undefined || !Number.isFinite(remainingUsd) || remainingUsd <= 0) return [];
  const floored = Math.max(Math.floor(remainingUsd * 1e6) / 1e6, 1e-6);
  return ["--max-budget-usd", String(floored)];
}

/** The argv of one Claude Code iteration (the prompt is not in it: it goes to stdin). */
export function claudeArgv(input: InvocationInput, bin: string): string[] {
  return [
    bin,
    "-p",
    "--output-format",
    "stream-json",
    "--verbose",
    // Without it, -p does not wait for approval: it refuses every Write/Edit/Bash and the run does nothing.
    // A user who sets a permission mode in --agent-args gets that instead.
    ...permissionFlags("claude", input.agentArgs ?? []),
    ...(input.model ? ["--model", input.model] : []),
    // The project's .claude/settings*.json are the agent's to write: hooks and env (an API server) in them are not the reviewer's.
    ...(input.untrustedTree ? ["--setting-sources", "user"] : []),
    ...budgetFlag(input.remainingBudgetUsd),
    ...(input.agentArgs ?? []),
  ];
}

/** Adapter for Claude Code (`@anthropic-ai/claude-code`, measured with 2.1.197). */
export const claudeAdapter: AgentAdapter = {
  name: "claude",
  // SIGINT makes Claude Code end its tool processes and print a result; SIGTERM leaves them running.
  politeSignals: ["SIGINT", "SIGTERM"],
  invocation(input) {
    const bin = binaryFrom(input.env, CLAUDE_BIN_VARIABLE, "claude");
    return { argv: claudeArgv(input, bin), stdin: input.prompt, env: {} };
  },
  parser: createClaudeParser,
};
