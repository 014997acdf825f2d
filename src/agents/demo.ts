// The built-in `demo` agent: a deterministic program that works through a task list offline.
import { fileURLToPath } from "node:url";
import { createClaudeParser } from "./claude-parser.js";
import type { AgentAdapter } from "./types.js";

/** Path of the demo agent's program (compiled next to this file). */
export const DEMO_AGENT_SCRIPT = fileURLToPath(new URL("./demo-agent.js", import.meta.url));

/** Adapter for the demo agent; it prints Claude Code-shaped stream-json, so it shares that parser. */
export const demoAdapter: AgentAdapter = {
  name: "demo",
  politeSignals: ["SIGINT", "SIGTERM"],
  invocation(input) {
    const env: Record<string, string> = input.tasksFile ? { RALPH_DEMO_TASKS: input.tasksFile } : {};
    return { argv: [process.execPath, DEMO_AGENT_SCRIPT], stdin: input.prompt, env };
  },
  parser: createClaudeParser,
};
