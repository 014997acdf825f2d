// Which credentials an agent will use, said before it starts, and so which billing applies as far as ralph can
// tell: an API key in its environment means metered billing; a Claude subscription (its OAuth token, or a
// claude.ai login Claude Code keeps in its config directory) means `claude -p` draws on the subscription's
// separate credit pool for headless use; anything else is unknown to ralph.
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { AgentName } from "../agents/types.js";

/** The variables each agent CLI takes its credentials from, most specific first. */
const CREDENTIALS: Record<AgentName, Array<[variable: string, what: string]>> = {
  claude: [
    ["ANTHROPIC_API_KEY", "metered API billing"],
    ["ANTHROPIC_AUTH_TOKEN", "metered API billing (bearer token)"],
    ["CLAUDE_CODE_USE_BEDROCK", "billing through AWS Bedrock"],
    ["CLAUDE_CODE_USE_VERTEX", "billing through Google Vertex AI"],
    [
      "CLAUDE_CODE_OAUTH_TOKEN",
      "the Claude subscription behind that OAuth token; claude -p draws on the subscription's separate credit pool for headless use",
    ],
  ],
  codex: [
    ["CODEX_API_KEY", "metered API billing"],
    ["OPENAI_API_KEY", "metered API billing"],
  ],
  gemini: [
    ["GEMINI_API_KEY", "metered API billing"],
    ["GOOGLE_API_KEY", "metered API billing"],
    ["GOOGLE_GENAI_USE_VERTEXAI", "billing through Google Vertex AI"],
  ],
  opencode: [
    ["ANTHROPIC_API_KEY", "metered API billing"],
    ["OPENAI_API_KEY", "metered API billing"],
    ["GEMINI_API_KEY", "metered API billing"],
    ["OPENROUTER_API_KEY", "metered API billing"],
  ],
  demo: [],
  command: [],
};

/** Besides its credentials, what each agent CLI reads of its environment to reach its provider and keep its state. */
const OWN: Record<AgentName, string[]> = {
  claude: [
    "ANTHROPIC_*",
    "CLAUDE_CODE_*",
    "CLAUDE_CONFIG_DIR",
    "DISABLE_*",
    "MAX_THINKING_TOKENS",
    "MCP_TIMEOUT",
    "BASH_DEFAULT_TIMEOUT_MS",
    "BASH_MAX_TIMEOUT_MS",
  ],
  codex: ["OPENAI_*", "CODEX_*"],
  gemini: ["GEMINI_*", "GOOGLE_GEMINI_*", "GOOGLE_CLOUD_PROJECT", "GOOGLE_CLOUD_LOCATION"],
  opencode: ["OPENCODE_*", "OPENROUTER_API_KEY"],
  demo: [],
  command: [],
};

/** The variables an agent CLI is meant to get: its credentials and its own settings (a trailing `*` matches a prefix). */
export function agentVariables(agent: AgentName): string[] {
  return [...CREDENTIALS[agent].map(([variable]) => variable), ...OWN[agent]];
}

/** Whether Claude Code has a claude.ai (subscription) login file in its config directory (only its presence is looked at). */
function claudeLoginFile(env: NodeJS.ProcessEnv): boolean {
  const dir =
    env.CLAUDE_CONFIG_DIR && env.CLAUDE_CONFIG_DIR.startsWith("/")
      ? env.CLAUDE_CONFIG_DIR
      : env.HOME && env.HOME.startsWith("/")
        ? join(env.HOME, ".claude")
        : null;
  return dir !== null && existsSync(join(dir, ".credentials.json"));
}

/** One line on the agent's credentials and billing (never their values), or null for the demo agent, which bills nothing. */
export function credentialsLine(agent: AgentName, env: NodeJS.ProcessEnv): string | null {
  if (agent === "command") return "credentials: the command's own: billing unknown to ralph";
  const known = CREDENTIALS[agent];
  if (known.length === 0) return null;
  const present = known.filter(([variable]) => (env[variable] ?? "") !== "");
  const first = present[0];
  if (first === undefined) {
    if (agent !== "claude")
      return `credentials: no API key variable reaches ${agent}; it uses its own login: billing unknown to ralph (a subscription, if that is how you signed in)`;
    // Since mid-2026 a Claude subscription bills headless `claude -p` calls to a credit pool of their own.
    if (claudeLoginFile(env))
      return "credentials: no API key variable reaches claude; it uses its claude.ai login, a Claude subscription: claude -p draws on the subscription's separate credit pool for headless use, not metered API billing";
    return "credentials: no API key variable reaches claude and ralph sees no claude.ai login file: billing unknown to ralph (under a Claude subscription, claude -p draws on the subscription's separate credit pool for headless use)";
  }
  const others = present.slice(1).map(([variable]) => variable);
  return `credentials: ${agent} gets ${first[0]}: ${first[1]}${others.length > 0 ? ` (also set: ${others.join(", ")})` : ""}`;
}
