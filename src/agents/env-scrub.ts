// The environment an agent starts with, and the redaction of secrets in what we log about it.
import { REDACTED, findSecrets, isSecretName, replaceRanges, secretValues } from "../redact/secrets.js";

export { isSecretName } from "../redact/secrets.js";

// Variables an agent CLI sets for the commands it runs. Inherited by a nested agent, they make it
// believe it is a child of another session (Claude Code then skips saving its session, for one).
const NESTING_VARIABLES = [
  // Claude Code (measured with 2.1.197: the environment its Bash tool gets, plus its IDE port).
  "CLAUDECODE",
  "CLAUDE_CODE_ENTRYPOINT",
  "CLAUDE_CODE_SSE_PORT",
  "CLAUDE_CODE_SESSION_ID",
  "CLAUDE_CODE_CHILD_SESSION",
  "CLAUDE_CODE_EXECPATH",
  "CLAUDE_EFFORT",
  "AI_AGENT",
  // Codex: set for the commands of its shell tool.
  "CODEX_SANDBOX",
  "CODEX_SANDBOX_NETWORK_DISABLED",
  "CODEX_THREAD_ID",
  "CODEX_CI",
  // Gemini CLI and OpenCode mark their tool commands the same way.
  "GEMINI_CLI",
  "OPENCODE",
] as const;

/** Names of the variables removed from an agent's environment. */
export const SCRUBBED_VARIABLES: readonly string[] = NESTING_VARIABLES;

/** The parent environment without nesting markers, plus `extra` (which wins over everything). */
export function agentEnvironment(parent: NodeJS.ProcessEnv, extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  const scrubbed = new Set<string>(NESTING_VARIABLES);
  for (const [name, value] of Object.entries(parent)) {
    if (value !== undefined && !scrubbed.has(name)) env[name] = value;
  }
  return { ...env, ...extra };
}

const SECRET_FLAG = /^--?([a-z0-9-]*(api-?key|token|secret|password))$/i;

/** `text` with credential values from `env` and key-shaped strings replaced by [REDACTED]. */
export function redactSecrets(text: string, env: NodeJS.ProcessEnv): string {
  return replaceRanges(text, findSecrets(text, secretValues(env)));
}

/** An argv safe to log: values of secret flags and of NAME=value secret assignments, and key-shaped strings, redacted. */
export function redactArgv(argv: string[]): string[] {
  return argv.map((arg, index) => {
    const previous = index > 0 ? argv[index - 1] : undefined;
    if (previous !== undefined && SECRET_FLAG.test(previous)) return REDACTED;
    const flagWithValue = /^(--?[a-z0-9-]+)=(.*)$/is.exec(arg);
    if (flagWithValue?.[1] && SECRET_FLAG.test(flagWithValue[1])) return `${flagWithValue[1]}=${REDACTED}`;
    const assignment = /^([A-Za-z_][A-Za-z0-9_]*)=(.+)$/s.exec(arg);
    if (assignment?.[1] && isSecretName(assignment[1])) return `${assignment[1]}=${REDACTED}`;
    return redactSecrets(arg, {});
  });
}
