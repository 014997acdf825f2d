// The options of `ralph run`: their names in each source, parsers and defaults.
import { AGENT_NAMES, type AgentName } from "../agents/types.js";
import type { NotifyTarget } from "../notify/notify-target.js";
import { DEFAULT_SANDBOX, parseSandbox, type SandboxSettings } from "../sandbox/sandbox-policy.js";
import {
  parseBoolean,
  parseChoice,
  parseCommandWords,
  parseCount,
  parsePositiveCount,
  parseSize,
  parseDuration,
  parsePositiveDuration,
  parseRunId,
  parseText,
  parseTextList,
  parseUsd,
  parseTaskIndex,
  parseArgumentList,
  parseChoiceList,
  type Parsed,
} from "../util/parse-value.js";
import { parseTokenCaps, type TokenCapsSetting } from "../util/parse-tokens.js";

/** Fully resolved settings of one run (the prompt itself is resolved separately). */
export interface RunSettings {
  promptFile: string | null;
  maxIterations: number;
  completionPromise: string | null;
  checks: string[];
  tasks: string | null;
  agent: AgentName;
  agentCmd: string[] | null;
  agentArgs: string[];
  model: string | null;
  timeoutMs: number;
  idleTimeoutMs: number | null;
  graceMs: number;
  maxCostUsd: number | null;
  /** Token caps by kind (`--max-tokens`): for agents that report tokens but no cost. */
  maxTokens: TokenCapsSetting | null;
  maxRuntimeMs: number | null;
  maxFailures: number;
  stallLimit: number;
  /** The same failure (check output or agent error) this many iterations in a row ends the run FAILED; 0 = off. */
  sameFailureLimit: number;
  /** A billing error (no credit left): end the run FAILED, or wait as for a usage limit. */
  onBillingError: "fail" | "wait";
  /** Check the agent binary, the work directory and the checks' programs before iteration 1. */
  preflight: "on" | "off";
  onLimit: "wait" | "stop";
  /** What an agent's `<ask>` does: wait for a person's answer, or only log it. */
  onAsk: "wait" | "continue";
  live: boolean;
  dryRun: boolean;
  dryRunDelayMs: number;
  json: boolean;
  name: string | null;
  /** Memory cap of each iteration's agent tree in bytes (needs a cgroup). */
  memoryMax: number | null;
  /** Process-count cap of each iteration's agent tree (needs a cgroup). */
  pidsMax: number | null;
  /** How long an agent may keep running after its final result before its tree is ended. */
  lingerMs: number;
  /** Agents to run instead, in order, while the agent before them waits out a usage limit. */
  fallbackAgents: FallbackAgent[];
  /** A usage limit resetting further away than this switches to the next fallback agent instead of waiting. */
  maxWaitMs: number;
  /** Where events are sent (from --notify, --webhook and ralph.yaml `notify:`); not an option of its own. */
  notifyTargets: NotifyTarget[];
  /** Work in a git worktree `.ralph/worktrees/<id>` on branch `ralph/<id>`. */
  worktree: boolean;
  /** Commit each iteration's changes; null until resolved (iteration with a worktree, else off). */
  commit: "iteration" | "off" | null;
  /** With --tasks: run up to this many child runs at once, one per pending task. */
  parallel: number | null;
  /** With --tasks: work on this one task (by id) only; the run ends DONE once it is marked done. */
  task: string | null;
  /** With --tasks: the 0-based position of the one task to work on (`job`: from JOB_COMPLETION_INDEX); resolved into `task`. */
  taskIndex: number | "job" | null;
  /** The `--parallel` run that started this one as its child. */
  parent: string | null;
  /** Run the agent and its checks in an operating-system sandbox (SPEC section 15). */
  sandbox: SandboxSettings;
  /** A `--parallel` parent: resolve iterations allowed per child whose merge conflicts or fails the checks. */
  maxResolve: number;
  /** Set by a `--parallel` parent: this run resolves a merge in the parent's integration worktree. */
  resolve: boolean;
}

/** Agents that can stand in for another (the `command` agent's command line belongs to the main agent). */
export const FALLBACK_AGENT_NAMES = AGENT_NAMES.filter((name): name is Exclude<AgentName, "command"> => name !== "command");
/** One agent that can stand in for another. */
export type FallbackAgent = (typeof FALLBACK_AGENT_NAMES)[number];

/** How one option is named in flags, the environment and ralph.yaml, and how its value is read. */
export interface OptionSpec<K extends keyof RunSettings = keyof RunSettings> {
  key: K;
  flag: string;
  env: string;
  yaml: string;
  parse: (raw: unknown) => Parsed<RunSettings[K]>;
  defaultValue: RunSettings[K];
}

const nullable =
  <T>(parse: (raw: unknown) => Parsed<T>) =>
  (raw: unknown): Parsed<T | null> =>
    parse(raw);

function spec<K extends keyof RunSettings>(
  key: K,
  flag: string,
  parse: (raw: unknown) => Parsed<RunSettings[K]>,
  defaultValue: RunSettings[K],
): OptionSpec<K> {
  const snake = flag.replace(/^--/, "").replace(/-/g, "_");
  return { key, flag, env: `RALPH_${snake.toUpperCase()}`, yaml: snake, parse, defaultValue };
}

/** Every `ralph run` option except the prompt words and `-- CMD ARGS`. */
export const RUN_OPTION_SPECS: readonly OptionSpec[] = [
  spec("promptFile", "--prompt-file", nullable(parseText), null),
  spec("maxIterations", "--max-iterations", parseCount, 3),
  spec("completionPromise", "--completion-promise", nullable(parseText), null),
  spec("checks", "--check", parseTextList, []),
  spec("tasks", "--tasks", nullable(parseText), null),
  spec("agent", "--agent", parseChoice<AgentName>(AGENT_NAMES), "claude"),
  spec("agentCmd", "--agent-cmd", nullable(parseCommandWords), null),
  spec("agentArgs", "--agent-args", parseArgumentList, []),
  spec("model", "--model", nullable(parseText), null),
  spec("timeoutMs", "--timeout", parsePositiveDuration, 30 * 60_000),
  spec("idleTimeoutMs", "--idle-timeout", nullable(parsePositiveDuration), null),
  spec("graceMs", "--grace", parseDuration, 5000),
  spec("maxCostUsd", "--max-cost", nullable(parseUsd), null),
  spec("maxTokens", "--max-tokens", nullable(parseTokenCaps), null),
  spec("maxRuntimeMs", "--max-runtime", nullable(parsePositiveDuration), null),
  spec("maxFailures", "--max-failures", parseCount, 3),
  spec("stallLimit", "--stall-limit", parseCount, 3),
  spec("sameFailureLimit", "--same-failure-limit", parseCount, 3),
  spec("onBillingError", "--on-billing-error", parseChoice(["fail", "wait"] as const), "fail"),
  spec("preflight", "--preflight", parseChoice(["on", "off"] as const), "on"),
  spec("onLimit", "--on-limit", parseChoice(["wait", "stop"] as const), "wait"),
  spec("onAsk", "--on-ask", parseChoice(["wait", "continue"] as const), "wait"),
  spec("live", "--live", parseBoolean, false),
  spec("dryRun", "--dry-run", parseBoolean, false),
  spec("dryRunDelayMs", "--dry-run-delay", parseDuration, 1000),
  spec("json", "--json", parseBoolean, false),
  spec("name", "--name", nullable(parseRunId), null),
  spec("memoryMax", "--memory-max", nullable(parseSize), null),
  spec("pidsMax", "--pids-max", nullable(parsePositiveCount), null),
  spec("lingerMs", "--linger", parsePositiveDuration, 10_000),
  spec("fallbackAgents", "--fallback-agent", parseChoiceList<FallbackAgent>(FALLBACK_AGENT_NAMES), []),
  spec("maxWaitMs", "--max-wait", parseDuration, 0),
  spec("worktree", "--worktree", parseBoolean, false),
  spec("commit", "--commit", nullable(parseChoice(["iteration", "off"] as const)), null),
  spec("parallel", "--parallel", nullable(parsePositiveCount), null),
  spec("task", "--task", nullable(parseText), null),
  spec("taskIndex", "--task-index", nullable(parseTaskIndex), null),
  spec("parent", "--parent", nullable(parseRunId), null),
  spec("sandbox", "--sandbox", parseSandbox, DEFAULT_SANDBOX),
  spec("maxResolve", "--max-resolve", parseCount, 2),
  spec("resolve", "--resolve", parseBoolean, false),
] as OptionSpec[];

/** The defaults of every setting. */
export function defaultSettings(): RunSettings {
  const settings: Partial<Record<keyof RunSettings, unknown>> = {};
  for (const option of RUN_OPTION_SPECS) settings[option.key] = option.defaultValue;
  // Notification targets are not an option of their own: --notify, --webhook and ralph.yaml fill them.
  return { ...(settings as RunSettings), notifyTargets: [] };
}
