// The contract between the loop engine and each agent adapter.

/** Names accepted by --agent. */
export const AGENT_NAMES = ["claude", "codex", "gemini", "opencode", "demo", "command"] as const;
/** One of the known agents. */
export type AgentName = (typeof AGENT_NAMES)[number];

/** Token counts as reported by the agent's CLI. */
export interface TokenUsage {
  input: number;
  output: number;
  cacheRead?: number;
  cacheWrite?: number;
}

/** What kind of failure the agent reported, when it reported one. */
export type AgentErrorKind = "rate_limit" | "auth" | "config" | "api" | "max_turns" | "other";

/** A provider usage or rate limit, with the reset time when the agent gave one. */
export interface LimitInfo {
  message: string;
  resetAt: Date | null;
}

/** One parsed piece of agent output, forwarded as an `agent_event`. */
export interface AgentEvent {
  /** `stderr`: a line the agent wrote to its stderr (ralph makes these; no parser does). */
  kind: "init" | "text" | "tool_use" | "tool_result" | "result" | "error" | "retry" | "stderr" | "other";
  text?: string;
  tool?: string;
  sessionId?: string;
  /** Tokens used so far in this iteration, when the agent reports them as it goes. */
  tokens?: TokenUsage;
  /**
   * Set when the agent reported an error no retry can fix (a rejected API key, an unknown model): the
   * iteration is ended at once and the run fails with this reason instead of waiting out the agent's retries.
   */
  fatal?: string;
}

/** What the adapter learned from a whole iteration's output. */
export interface AgentOutcome {
  /** The agent's final message: the only text the promise is looked for in. */
  finalMessage: string | null;
  /** True when the output included the agent's own end-of-run record (e.g. Claude Code's `result` line). */
  sawResult: boolean;
  sessionId?: string;
  costUsd?: number;
  tokens?: TokenUsage;
  turns?: number;
  error?: { kind: AgentErrorKind; message: string };
  limit?: LimitInfo;
}

/** Incremental parser of one iteration's stdout. */
export interface OutputParser {
  /** Feeds one complete stdout line (without the newline); returns the events it produced. */
  line(text: string): AgentEvent[];
  /** Called once after the process exited; the stderr tail helps classify errors. */
  finish(stderrTail: string, exit: { code: number | null; signal: string | null }): AgentOutcome;
}

/** What the loop gives an adapter to build one iteration's command. */
export interface InvocationInput {
  prompt: string;
  cwd: string;
  /** The runner's environment (where a CLI's binary may be overridden); never read from process.env. */
  env: NodeJS.ProcessEnv;
  model?: string;
  /** Remaining budget in USD when --max-cost is set, for CLIs that take a per-call cap. */
  remainingBudgetUsd?: number;
  /** The argv of the `command` agent. */
  commandArgv?: string[];
  /** Where the adapter may write files it needs (e.g. a prompt file). */
  scratchDir: string;
  /** The task list file, when the run has one. */
  tasksFile?: string;
  /** Extra arguments for the agent CLI (--agent-args), passed as they are. */
  agentArgs?: string[];
  /** The work tree was written by another agent (a reviewer runs there): the CLI takes no settings or hooks from it. */
  untrustedTree?: boolean;
}

/** The process to start for one iteration. The prompt never goes through a shell. */
export interface Invocation {
  argv: string[];
  /** Text written to the agent's stdin, then closed; null gives it an empty stdin. */
  stdin: string | Buffer | null;
  /** Extra environment for the agent (on top of the scrubbed parent environment). */
  env: Record<string, string>;
}

/** One agent CLI: how to start it and how to read what it prints. */
export interface AgentAdapter {
  name: AgentName;
  /** Signals sent, in order, to end the agent politely before SIGKILL. */
  politeSignals: NodeJS.Signals[];
  invocation(input: InvocationInput): Invocation;
  parser(input: { prompt: string }): OutputParser;
  /**
   * Where a reviewer of a tree another agent wrote starts, for a CLI that takes settings from the directory
   * it starts in and those above it (the tree itself is then named in its arguments). Throws when there is none.
   */
  untrustedCwd?(input: { cwd: string; env: NodeJS.ProcessEnv }): string;
}
