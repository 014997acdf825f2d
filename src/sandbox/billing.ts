// Which credentials an agent will use, said before it starts: an API key in its environment means metered billing.
import type { AgentName } from "../agents/types.js";

/** The variables each agent CLI takes its credentials from, most specific first. */
const CREDENTIALS: Record<AgentName, Array<[variable: string, what: string]>> = {
  claude: [
    ["ANTHROPIC_API_KEY", "metered API billing"],
    ["ANTHROPIC_AUTH_TOKEN", "metered API billing (bearer token)"],
    ["CLAUDE_CODE_USE_BEDROCK", "billing through AWS Bedrock"],
    ["CLAUDE_CODE_USE_VERTEX", "billing through Google Vertex AI"],
    ["CLAUDE_CODE_OAUTH_TOKEN", "the subscription behind that OAuth token"],
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
  claude: ["ANTHROPIC_*", "CLAUDE_CODE_*", "CLAUDE_CONFIG_DIR", "DISABLE_*", "MAX_THINKING_TOKENS", "MCP_TIMEOUT", "BASH_DEFAULT_TIMEOUT_MS", "BASH_MAX_TIMEOUT_MS"],
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

/** One line on the agent's credentials (never their values), or null for agents that need none. */
export function credentialsLine(agent: AgentName, env: NodeJS.ProcessEnv): string | null {
  const known = CREDENTIALS[agent];
  if (known.length === 0) return null;
  const present = known.filter(([variable]) => (env[variable] ?? "") !== "");
  const first = present[0];
  if (first === undefined) {
    // Since mid-2026 a Claude subscription bills headless `claude -p` calls to a credit pool of their own.
    const pool = agent === "claude" ? ": under a Claude subscription, claude -p draws on the subscription's separate credit pool for headless use, not metered API billing; ralph cannot see which login it is" : " (a subscription, if that is how you signed in)";
    return `credentials: no API key variable reaches ${agent}; it uses its own login${pool}`;
  }
  const others = present.slice(1).map(([variable]) => variable);
  return `credentials: ${agent} gets ${first[0]}: ${first[1]}${others.length > 0 ? ` (also set: ${others.join(", ")})` : ""}`;
}
