// How each agent CLI is told to act without asking, and how a user's own --agent-args take that over.
import type { AgentName } from "./types.js";

/** The flags ralph adds so a headless agent can work, and the user flags that replace them. */
export interface PermissionMode {
  /** Added when the user gives none of `overriddenBy`. */
  flags: string[];
  /** Any of these in --agent-args means the user chose the permission mode: `flags` are left out. */
  overriddenBy: string[];
  /** An --agent-args value that turns the blanket permission off, for the start-of-run note. */
  example: string;
}

/** The permission flags of the agents that have them. */
export const PERMISSION_MODES: Partial<Record<AgentName, PermissionMode>> = {
  claude: {
    flags: ["--dangerously-skip-permissions"],
    overriddenBy: ["--dangerously-skip-permissions", "--permission-mode", "--permission-prompt-tool"],
    example: "--permission-mode acceptEdits",
  },
  codex: {
    flags: ["--dangerously-bypass-approvals-and-sandbox"],
    overriddenBy: ["--dangerously-bypass-approvals-and-sandbox", "--sandbox", "-s", "--full-auto"],
    example: "--sandbox workspace-write",
  },
  gemini: {
    flags: ["--yolo"],
    overriddenBy: ["--yolo", "-y", "--approval-mode"],
    example: "--approval-mode auto_edit",
  },
  opencode: { flags: ["--auto"], overriddenBy: ["--auto"], example: "(configure permissions in opencode.json)" },
};

/** Whether `args` holds `flag`, alone or as `flag=value`. */
function hasFlag(args: readonly string[], flag: string): boolean {
  return args.some((arg) => arg === flag || arg.startsWith(`${flag}=`));
}

/** The permission flags to pass for `agent` given the user's extra arguments (none when the user chose). */
export function permissionFlags(agent: AgentName, agentArgs: readonly string[]): string[] {
  const mode = PERMISSION_MODES[agent];
  if (!mode) return [];
  return mode.overriddenBy.some((flag) => hasFlag(agentArgs, flag)) ? [] : mode.flags;
}
