// Where each agent CLI keeps its own state: writable inside the sandbox (an agent that cannot write its
// session files cannot run its tools), except the files in it that make the CLI run code later, outside.
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import type { AgentName } from "../agents/types.js";

/** Per agent: its state directories (under HOME), and the files in them that stay read-only. */
const STATE: Record<AgentName, { dirs: string[]; files: string[]; readOnly: string[] }> = {
  claude: { dirs: [".claude"], files: [".claude.json"], readOnly: [".claude/settings.json", ".claude/settings.local.json", ".claude/hooks", ".claude/commands", ".claude/agents", ".claude/plugins"] },
  codex: { dirs: [".codex"], files: [], readOnly: [".codex/config.toml"] },
  gemini: { dirs: [".gemini"], files: [], readOnly: [".gemini/settings.json"] },
  opencode: { dirs: [".local/share/opencode", ".cache/opencode"], files: [], readOnly: [] },
  demo: { dirs: [], files: [], readOnly: [] },
  command: { dirs: [], files: [], readOnly: [] },
};

/** The agent's writable state paths under `home` (directories made if missing, files only where they exist) and the read-only ones in them. */
export function agentState(agent: AgentName, home: string): { writable: string[]; readOnly: string[] } {
  const state = STATE[agent];
  const writable: string[] = [];
  for (const dir of state.dirs) {
    const path = join(home, dir);
    try {
      mkdirSync(path, { recursive: true, mode: 0o700 });
      writable.push(path);
    } catch {
      // A HOME the agent could not write anyway.
    }
  }
  for (const file of state.files) if (existsSync(join(home, file))) writable.push(join(home, file));
  return { writable, readOnly: state.readOnly.map((path) => join(home, path)).filter((path) => existsSync(path)) };
}
