// How a person gets each agent CLI ralph drives, for the messages shown when one is missing.
import type { AgentName } from "./types.js";

/** The install command of each agent CLI; null for agents that need nothing installed. */
export const INSTALL_COMMANDS: Record<AgentName, string | null> = {
  claude: "npm install -g @anthropic-ai/claude-code",
  codex: "npm install -g @openai/codex",
  gemini: "npm install -g @google/gemini-cli",
  opencode: "npm install -g opencode-ai",
  demo: null,
  command: null,
};

/** One line for an agent CLI that is not installed: how to install it, and how to try ralph without it. */
export function installHint(agent: string): string {
  const command = (INSTALL_COMMANDS as Record<string, string | null | undefined>)[agent];
  const install = command
    ? `install it with ${command} (or point ralph at it with RALPH_${agent.toUpperCase()}_BIN)`
    : "check the command and PATH";
  return `${install}; to try ralph without any agent CLI: ralph run --agent demo, or ralph demo`;
}
