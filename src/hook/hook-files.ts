// Where the in-session loop keeps its files: Claude Code's project directory `.claude/` and the run directory.
import { join } from "node:path";

/** The files of the in-session loop of one project. */
export interface HookFiles {
  /** `.claude/ralph-loop.local.md`: the loop (front matter) and prompt (body). */
  loop: string;
  /** Held while a hook or a cancel reads and rewrites the state file. */
  lock: string;
  /** `.claude/settings.local.json`, where the Stop hook is installed (per machine: it holds absolute paths). */
  settings: string;
  /** `.claude/settings.json`, shared through git: ralph's hook is moved out of it. */
  sharedSettings: string;
  /** `.claude/commands/`, for the slash commands. */
  commands: string;
}

/** The in-session loop files of `projectDir`. */
export function hookFiles(projectDir: string): HookFiles {
  const claudeDir = join(projectDir, ".claude");
  return {
    loop: join(claudeDir, "ralph-loop.local.md"),
    lock: join(claudeDir, "ralph-loop.local.lock"),
    settings: join(claudeDir, "settings.local.json"),
    sharedSettings: join(claudeDir, "settings.json"),
    commands: join(claudeDir, "commands"),
  };
}

/** The hook's per-turn bookkeeping inside a run directory (how many stops it blocked in the current turn). */
export function turnFile(runDir: string): string {
  return join(runDir, "hook-turn.json");
}

/** The project directory a hook or command works on: Claude Code's project dir when it tells us, else `fallback`. */
export function projectDirFrom(env: NodeJS.ProcessEnv, fallback: string): string {
  const fromClaude = env.CLAUDE_PROJECT_DIR;
  return fromClaude && fromClaude.trim() !== "" ? fromClaude : fallback;
}
