// Looks up the adapter for an agent name.
import { claudeAdapter } from "./claude.js";
import { codexAdapter } from "./codex.js";
import { commandAdapter } from "./command.js";
import { demoAdapter } from "./demo.js";
import { geminiAdapter } from "./gemini.js";
import { opencodeAdapter } from "./opencode.js";
import type { AgentAdapter, AgentName } from "./types.js";

/** The adapter of each agent. */
const ADAPTERS: Record<AgentName, AgentAdapter> = {
  claude: claudeAdapter,
  codex: codexAdapter,
  command: commandAdapter,
  demo: demoAdapter,
  gemini: geminiAdapter,
  opencode: opencodeAdapter,
};

/** The adapter for `name`. */
export function adapterFor(name: AgentName): AgentAdapter {
  return ADAPTERS[name];
}
