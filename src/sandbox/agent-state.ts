// Where each agent CLI keeps its own state: writable inside the sandbox (an agent that cannot write its
// session files cannot run its tools), except what in it makes the CLI run code later, outside (settings,
// hooks, commands, agents, MCP servers, notify programs). Those are read-only inside whether they existed
// or not: a missing one is made first, empty (an empty directory, `{}` or an empty file: the same to the
// CLI as none), so that a path that does not exist is not a way in.
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import type { AgentName } from "../agents/types.js";
import { ensurePlaceholder, type Placeholder } from "./placeholder.js";

/** Per agent: its state directories (under HOME), files given a private copy per run, and the paths in them that stay read-only. */
const STATE: Record<AgentName, { dirs: string[]; copies: string[]; readOnly: string[] }> = {
  claude: {
    dirs: [".claude"],
    // Claude Code writes it all the time, and it holds user-scope MCP servers (commands): each run works on a copy.
    copies: [".claude.json"],
    readOnly: [".claude/settings.json", ".claude/settings.local.json", ".claude/CLAUDE.md", ".claude/hooks", ".claude/commands", ".claude/agents", ".claude/skills", ".claude/plugins", ".claude/output-styles"],
  },
  codex: { dirs: [".codex"], copies: [], readOnly: [".codex/config.toml", ".codex/AGENTS.md", ".codex/prompts", ".codex/rules"] },
  gemini: { dirs: [".gemini"], copies: [], readOnly: [".gemini/settings.json", ".gemini/GEMINI.md", ".gemini/commands", ".gemini/extensions"] },
  opencode: { dirs: [".local/share/opencode", ".cache/opencode"], copies: [], readOnly: [] },
  demo: { dirs: [], copies: [], readOnly: [] },
  command: { dirs: [], copies: [], readOnly: [] },
};

/** A missing read-only path's placeholder: a directory, or a file whose empty content means nothing to its CLI. */
function placeholderOf(path: string): Placeholder {
  if (!/\.(json|toml|md)$/.test(path)) return { kind: "directory", private: true };
  return { kind: "file", content: path.endsWith(".json") ? "{}\n" : "", private: true };
}

/** The agent's writable state directories under `home` (made if missing), its files to copy per run (existing ones), and the read-only paths in them (made if missing). */
export function agentState(agent: AgentName, home: string): { writable: string[]; copies: string[]; readOnly: string[] } {
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
  const readOnly = state.readOnly.map((path) => join(home, path)).filter((path) => writable.some((dir) => path.startsWith(`${dir}/`)) && ensurePlaceholder(path, placeholderOf(path)));
  return { writable, copies: state.copies.map((file) => join(home, file)).filter((path) => existsSync(path)), readOnly };
}
