// Looks up the adapter for an agent name.
import { claudeAdapter } from "./claude.js";
import { commandAdapter } from "./command.js";
import { demoAdapter } from "./demo.js";
import type { AgentAdapter, AgentName } from "./types.js";

/** The adapter of each agent that has one so far. */
const ADAPTERS: Partial<Record<AgentName, AgentAdapter>> = {
  claude: claudeAdapter,
  command: commandAdapter,
  demo: demoAdapter,
};

/** The adapter for `name`, or null when that agent is not supported yet. */
export function adapterFor(name: AgentName): AgentAdapter | null {
  return ADAPTERS[name] ?? null;
}
