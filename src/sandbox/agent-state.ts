// Where each agent CLI keeps its own state: writable inside the sandbox (an agent that cannot write its
// session files cannot run its tools), except what in it makes the CLI run code later, outside (settings,
// hooks, commands, agents, MCP servers, notify programs). Those are read-only inside whether they existed
// or not: a missing one is made first, empty (an empty directory, `{}` or an empty file: the same to the
// CLI as none), so that a path that does not exist is not a way in. A CLI whose directory the person moved
// (CLAUDE_CONFIG_DIR, CODEX_HOME) is protected there, where it reads its settings from.
import { existsSync, lstatSync, mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import type { AgentName } from "../agents/types.js";
import { ensurePlaceholder, type Placeholder } from "./placeholder.js";

/**
 * Per agent: its state directories (under HOME; the first is the CLI's own, which `variable` moves when the
 * person sets it), the files in HOME (in the moved directory, when moved) given a private copy per run, and
 * the paths in the CLI's own directory that stay read-only.
 */
const STATE: Record<
  AgentName,
  { dirs: string[]; variable?: string; copies: string[]; readOnly: string[]; absent?: string[] }
> = {
  claude: {
    dirs: [".claude"],
    variable: "CLAUDE_CONFIG_DIR",
    // Claude Code writes it all the time, and it holds user-scope MCP servers (commands): each run works on a copy.
    copies: [".claude.json"],
    readOnly: [
      "settings.json",
      "settings.local.json",
      "CLAUDE.md",
      "hooks",
      "commands",
      "agents",
      "skills",
      "plugins",
      "output-styles",
    ],
    // Once there, Claude Code reads it instead of .claude.json (MCP servers and all). No placeholder can be
    // bound ahead (an empty one would replace the person's config): one planted is found afterwards (see
    // tamper-scan.ts); one already there is copied per run like .claude.json.
    absent: [".config.json"],
  },
  codex: {
    dirs: [".codex"],
    variable: "CODEX_HOME",
    copies: [],
    readOnly: ["config.toml", "AGENTS.md", "prompts", "rules"],
  },
  gemini: { dirs: [".gemini"], copies: [], readOnly: ["settings.json", "GEMINI.md", "commands", "extensions"] },
  opencode: { dirs: [".local/share/opencode", ".cache/opencode"], copies: [], readOnly: [] },
  demo: { dirs: [], copies: [], readOnly: [] },
  command: { dirs: [], copies: [], readOnly: [] },
};

/** A missing read-only path's placeholder: a directory, or a file whose empty content means nothing to its CLI. */
function placeholderOf(path: string): Placeholder {
  if (!/\.(json|toml|md)$/.test(path)) return { kind: "directory", private: true };
  return { kind: "file", content: path.endsWith(".json") ? "{}\n" : "", private: true };
}

/**
 * The agent's writable state directories (made if missing), its files to copy per run (existing ones), and
 * the read-only paths in them (made if missing). The CLI's own directory is where `env` moves it (a relative
 * value taken from `base`, where the agent starts), else under `home`.
 */
export function agentState(
  agent: AgentName,
  home: string,
  env: NodeJS.ProcessEnv = {},
  base: string = home,
): { writable: string[]; copies: string[]; readOnly: string[]; watched: string[] } {
  const state = STATE[agent];
  const moved = state.variable === undefined ? "" : (env[state.variable] ?? "");
  const dirs = state.dirs.map((dir, index) => (index === 0 && moved !== "" ? resolve(base, moved) : join(home, dir)));
  const own = dirs[0];
  const writable: string[] = [];
  for (const path of dirs) {
    try {
      mkdirSync(path, { recursive: true, mode: 0o700 });
      writable.push(path);
    } catch {
      // A HOME the agent could not write anyway.
    }
  }
  const readOnly =
    own === undefined || !writable.includes(own)
      ? []
      : state.readOnly.map((path) => join(own, path)).filter((path) => ensurePlaceholder(path, placeholderOf(path)));
  const copies = state.copies.map((file) => (moved !== "" && own !== undefined ? join(own, file) : join(home, file)));
  // Files that must not appear in the CLI's writable directory: watched where missing, copied where there.
  const absent =
    own === undefined || !writable.includes(own) ? [] : (state.absent ?? []).map((file) => join(own, file));
  const watched = absent.filter((path) => lstatSync(path, { throwIfNoEntry: false }) === undefined);
  return { writable, copies: [...copies, ...absent].filter((path) => existsSync(path)), readOnly, watched };
}
