// The environment an agent starts with, and the redaction of secrets in what we log about it.

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

const REDACTED = "[REDACTED]";
const SECRET_NAME = /(^|_)(API_?KEY|TOKEN|SECRET|PASSWORD|PASSWD|ACCESS_KEY|PRIVATE_KEY|AUTH)$|^(API_?KEY|TOKEN|SECRET)(_|$)/i;
// Values shorter than this are not treated as secrets: redacting every "test" or "1" helps nobody.
const MIN_SECRET_LENGTH = 8;
// Well-known key shapes, found even when no variable holds them.
const KEY_SHAPES: RegExp[] = [
  /\bsk-[A-Za-z0-9_-]{16,}/g,
  /\b(ghp|gho|ghs|ghu|ghr)_[A-Za-z0-9]{20,}/g,
  /\bgithub_pat_[A-Za-z0-9_]{20,}/g,
  /\bAIza[A-Za-z0-9_-]{30,}/g,
  /\bxox[abprs]-[A-Za-z0-9-]{10,}/g,
];
const SECRET_FLAG = /^--?([a-z0-9-]*(api-?key|token|secret|password))$/i;

/** Whether a variable name looks like it holds a credential. */
export function isSecretName(name: string): boolean {
  return SECRET_NAME.test(name);
}

/** `text` with credential values from `env` and key-shaped strings replaced by [REDACTED]. */
export function redactSecrets(text: string, env: NodeJS.ProcessEnv): string {
  const values = Object.entries(env)
    .filter(([name, value]) => value !== undefined && value.length >= MIN_SECRET_LENGTH && isSecretName(name))
    .map(([, value]) => value as string)
    // Longest first, so a secret that contains another is replaced whole.
    .sort((a, b) => b.length - a.length);
  let result = text;
  for (const value of values) result = result.split(value).join(REDACTED);
  for (const shape of KEY_SHAPES) result = result.replace(shape, REDACTED);
  return result;
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
