// The options of `ralph run`, each declared once: its flag, environment variable, ralph.yaml key, type and
// parser, default and help. --help, the ralph.yaml schema, init's template and docs/reference/ all read these.
import { AGENT_NAMES, type AgentName } from "../agents/types.js";
import type { NotifyTarget } from "../notify/notify-target.js";
import { DEFAULT_SANDBOX, parseSandbox, type SandboxSettings } from "../sandbox/sandbox-policy.js";
import type { Parsed } from "../util/parse-value.js";
import { DEFAULT_MAX_ITERATIONS } from "../store/plan-fields.js";
import {
  argumentList,
  boolean,
  choice,
  choiceList,
  commandWords,
  count,
  custom,
  duration,
  nullable,
  positiveCount,
  positiveDuration,
  runId,
  size,
  taskIndex,
  text,
  textList,
  usd,
  type OptionType,
} from "./option-types.js";
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
export const FALLBACK_AGENT_NAMES = AGENT_NAMES.filter(
  (name): name is Exclude<AgentName, "command"> => name !== "command",
);
/** One agent that can stand in for another. */
export type FallbackAgent = (typeof FALLBACK_AGENT_NAMES)[number];

/** How one option is named in flags, the environment and ralph.yaml, how its value is read, and what it means. */
export interface OptionSpec<K extends keyof RunSettings = keyof RunSettings> {
  key: K;
  /** The long flag, e.g. `--max-iterations`. */
  flag: string;
  /** The flag as --help shows it, e.g. `-n, --max-iterations <n>`. */
  flags: string;
  /** `RALPH_MAX_ITERATIONS`; null for an internal option. */
  env: string | null;
  /** `max_iterations`; null for an internal option. */
  yaml: string | null;
  type: OptionType<RunSettings[K]>;
  parse: (raw: unknown) => Parsed<RunSettings[K]>;
  defaultValue: RunSettings[K];
  /** One line for --help; `{default}` stands for the default as `type.show` words it. */
  help: string;
  /** More for the reference page, after the help line. */
  details?: string;
  /** Given more than once, every value is kept, in order. */
  repeatable: boolean;
  /** Set by ralph itself on the runs it starts: hidden from help, the environment, ralph.yaml and the reference. */
  internal: boolean;
}

interface Extra {
  details?: string;
  repeatable?: boolean;
  internal?: boolean;
}

function option<K extends keyof RunSettings>(
  key: K,
  flags: string,
  type: OptionType<RunSettings[K]>,
  defaultValue: RunSettings[K],
  help: string,
  extra: Extra = {},
): OptionSpec<K> {
  const flag = /--[a-z-]+/.exec(flags)?.[0] ?? flags;
  const snake = flag.replace(/^--/, "").replace(/-/g, "_");
  const internal = extra.internal === true;
  return {
    key,
    flag,
    flags,
    env: internal ? null : `RALPH_${snake.toUpperCase()}`,
    yaml: internal ? null : snake,
    type,
    parse: type.parse,
    defaultValue,
    help,
    ...(extra.details === undefined ? {} : { details: extra.details }),
    repeatable: extra.repeatable === true,
    internal,
  };
}

/** `--max-tokens`: a count over every kind, or counts by kind. */
const tokenCapsType = custom(
  parseTokenCaps,
  {
    anyOf: [
      { type: "integer", minimum: 1 },
      {
        type: "string",
        pattern: "^\\s*([a-z_]+=)?[0-9]+(\\.[0-9]+)?[kKmMgG]?(\\s*,\\s*([a-z_]+=)?[0-9]+(\\.[0-9]+)?[kKmMgG]?)*\\s*$",
      },
    ],
  },
  (caps) =>
    Object.entries(caps)
      .map(([kind, n]) => (kind === "total" ? String(n) : `${kind}=${n}`))
      .join(","),
  "tokens, or tokens by kind",
);

const SANDBOX_MODES = ["on", "off", "auto"] as const;
const sandboxType = custom(
  parseSandbox,
  {
    anyOf: [
      { enum: [...SANDBOX_MODES, true, false] },
      {
        type: "object",
        additionalProperties: false,
        properties: {
          mode: { enum: [...SANDBOX_MODES] },
          network: {
            anyOf: [
              { enum: ["default", "none", "allow"] },
              { type: "object", properties: { allow: { type: "array", items: { type: "string" } } } },
            ],
          },
          allow: { anyOf: [{ type: "string" }, { type: "array", items: { type: "string" } }] },
          read_deny: { anyOf: [{ type: "string" }, { type: "array", items: { type: "string" } }] },
          write_allow: { anyOf: [{ type: "string" }, { type: "array", items: { type: "string" } }] },
          env: { anyOf: [{ type: "string" }, { type: "array", items: { type: "string" } }] },
        },
      },
    ],
  },
  (value) => value.mode,
  "on | off | auto, or a mapping",
);

/** Every `ralph run` option except the prompt words, `-- CMD ARGS` and the notification flags: the one place each is declared. */
export const RUN_OPTION_SPECS: readonly OptionSpec[] = [
  option(
    "promptFile",
    "-p, --prompt-file <file>",
    nullable(text),
    null,
    "read the prompt from a file (default: PROMPT.md when present)",
  ),
  option(
    "maxIterations",
    "-n, --max-iterations <n>",
    count,
    DEFAULT_MAX_ITERATIONS,
    "stop after N iterations with MAX_ITERATIONS (default {default}; 0 = unlimited)",
    { details: "Base 10 (`08` is 8); `ralph continue RUN -n N` raises it later." },
  ),
  option(
    "completionPromise",
    "--completion-promise <text>",
    nullable(text),
    null,
    "end when the agent's final message holds <promise>TEXT</promise>",
  ),
  option(
    "checks",
    "--check <cmd>",
    textList,
    [],
    "completion criterion: a shell command that passes on exit 0 (repeatable)",
    {
      repeatable: true,
      details: "A command from your own config (never from the agent), run with `sh -c` in the work directory.",
    },
  ),
  option(
    "tasks",
    "--tasks <file>",
    nullable(text),
    null,
    "task list: prd.json (userStories[].passes) or a Markdown checklist",
  ),
  option(
    "agent",
    "--agent <name>",
    choice<AgentName>(AGENT_NAMES),
    "claude",
    `${AGENT_NAMES.slice(0, -1).join(", ")} or ${AGENT_NAMES.at(-1) ?? ""} (default {default})`,
  ),
  option(
    "agentCmd",
    "--agent-cmd <cmd>",
    nullable(commandWords),
    null,
    "the command agent's command line (split into words, no shell); or give it after --",
  ),
  option(
    "agentArgs",
    "--agent-args <args>",
    argumentList,
    [],
    'extra arguments for the agent CLI, split like a shell would but with nothing expanded, passed without a shell (e.g. "--permission-mode acceptEdits")',
    {
      details: "In ralph.yaml, `agent_args:` may be a list.",
    },
  ),
  option("model", "--model <model>", nullable(text), null, "model passed to the agent (default: the agent's own)"),
  option(
    "timeoutMs",
    "--timeout <dur>",
    positiveDuration,
    30 * 60_000,
    "wall-clock limit of one iteration, e.g. 90s, 15m, 2h (default {default})",
    { details: "The iteration is ended (its whole process tree) and counted as failed." },
  ),
  option(
    "idleTimeoutMs",
    "--idle-timeout <dur>",
    nullable(positiveDuration),
    null,
    "end an iteration that printed nothing for DUR (default off)",
    { details: "The iteration is ended and counted as failed." },
  ),
  option(
    "graceMs",
    "--grace <dur>",
    duration,
    5000,
    "time between the polite signal and SIGKILL when ending an agent (default {default})",
  ),
  option(
    "maxCostUsd",
    "--max-cost <usd>",
    nullable(usd),
    null,
    "stop with BUDGET_EXCEEDED once the recorded spend reaches USD",
  ),
  option(
    "maxTokens",
    "--max-tokens <n>",
    nullable(tokenCapsType),
    null,
    "stop with BUDGET_EXCEEDED once the run's tokens reach N (all kinds), or by kind: output=200k,input=1M",
    {
      details: "Kinds: input, output, cache_read, cache_write, total; see [spend and budgets](../spend.md).",
    },
  ),
  option(
    "maxRuntimeMs",
    "--max-runtime <dur>",
    nullable(positiveDuration),
    null,
    "stop with RUNTIME_EXCEEDED once the run has lasted DUR",
  ),
  option(
    "maxFailures",
    "--max-failures <n>",
    count,
    3,
    "consecutive failed iterations before FAILED (default {default})",
  ),
  option(
    "stallLimit",
    "--stall-limit <n>",
    count,
    3,
    "iterations without change to git tree, HEAD or task list before STALLED (default {default}, 0 = off)",
  ),
  option(
    "sameFailureLimit",
    "--same-failure-limit <n>",
    count,
    3,
    "iterations in a row with the same failure (same check output or same agent error) before FAILED (default {default}, 0 = off)",
  ),
  option(
    "onBillingError",
    "--on-billing-error <mode>",
    choice(["fail", "wait"] as const),
    "fail",
    "on a billing error (credit balance too low): fail the run, or wait like a usage limit (default {default})",
    { details: "A billing error is `credit balance too low` or `insufficient_quota`." },
  ),
  option(
    "preflight",
    "--preflight <on|off>",
    choice(["on", "off"] as const),
    "on",
    "before iteration 1, check the agent binary, the work directory and the checks' programs (default {default})",
  ),
  option(
    "onLimit",
    "--on-limit <mode>",
    choice(["wait", "stop"] as const),
    "wait",
    "on a provider usage limit: wait for the reset, or stop (default {default})",
  ),
  option(
    "onAsk",
    "--on-ask <mode>",
    choice(["wait", "continue"] as const),
    "wait",
    "when the agent ends with <ask>QUESTION</ask>: wait for ralph answer, or continue (only log it) (default {default})",
  ),
  option("live", "--live", boolean, false, "show the agent's messages and tool calls as they stream"),
  option(
    "dryRun",
    "--dry-run",
    boolean,
    false,
    "never start the agent: log the argv it would run and sleep --dry-run-delay",
  ),
  option(
    "dryRunDelayMs",
    "--dry-run-delay <dur>",
    duration,
    1000,
    "how long each dry-run iteration sleeps (default {default})",
  ),
  option("json", "--json", boolean, false, "write the event stream to stdout instead of human output"),
  option("name", "--name <id>", nullable(runId), null, "run id (default YYYYMMDD-HHMMSS-xxxx)", {
    details:
      "Letters, digits, `.`, `_`, `-`, starting with a letter, digit or `_`; generated ids are UTC and sort by start time.",
  }),
  option(
    "memoryMax",
    "--memory-max <size>",
    nullable(size),
    null,
    "memory cap of each iteration's agent tree, e.g. 2G (needs a writable cgroup)",
    { details: "K, M, G and T are powers of 1024; see [supervision](../internals/supervision.md)." },
  ),
  option(
    "pidsMax",
    "--pids-max <n>",
    nullable(positiveCount),
    null,
    "process-count cap of each iteration's agent tree (needs a writable cgroup)",
  ),
  option(
    "lingerMs",
    "--linger <dur>",
    positiveDuration,
    10_000,
    "end an agent still running this long after its final result (default {default})",
  ),
  option(
    "fallbackAgents",
    "--fallback-agent <name>",
    choiceList<FallbackAgent>(FALLBACK_AGENT_NAMES),
    [],
    "agent to run instead while the one before it waits out a usage limit resetting later than --max-wait (repeatable, in order)",
    { repeatable: true, details: "A list in ralph.yaml (`fallback_agent:`), comma-separated in the environment." },
  ),
  option(
    "maxWaitMs",
    "--max-wait <dur>",
    duration,
    0,
    "longest usage-limit wait before switching to a --fallback-agent (default {default}: switch at once)",
  ),
  option(
    "worktree",
    "--worktree",
    boolean,
    false,
    "work in a git worktree .ralph/worktrees/RUN on a new branch ralph/RUN from HEAD; your checkout is never touched",
    { details: "See [worktrees and parallel runs](../worktrees-and-parallel.md)." },
  ),
  option(
    "commit",
    "--commit <policy>",
    nullable(choice(["iteration", "off"] as const)),
    null,
    "iteration: commit each iteration's changes on the run's branch; off (default iteration with --worktree, else off)",
    { details: "`iteration` without a worktree is refused; a `--parallel` run commits each child's iterations." },
  ),
  option(
    "parallel",
    "--parallel <n>",
    nullable(positiveCount),
    null,
    "with --tasks: up to N child runs at once, each on one pending task in its own worktree and branch",
    { details: "See [worktrees and parallel runs](../worktrees-and-parallel.md)." },
  ),
  option(
    "task",
    "--task <id>",
    nullable(text),
    null,
    "with --tasks: work on this one task only (its id, or its line in a checklist); ends DONE once it is marked done",
  ),
  option(
    "taskIndex",
    "--task-index <n>",
    nullable(taskIndex),
    null,
    "with --tasks: work on the Nth task only (0-based, file order), whatever the others' state; job: N from JOB_COMPLETION_INDEX (a Kubernetes Indexed Job). The run is named after the task, so --worktree works on branch ralph/TASK-ID",
    {
      details:
        "A task already done ends NO_WORK at once; N beyond the list is a usage error. See [many machines](../many-machines.md).",
    },
  ),
  option("parent", "--parent <run>", nullable(runId), null, "(set by --parallel) the run that started this one", {
    internal: true,
  }),
  option(
    "sandbox",
    "--sandbox",
    sandboxType,
    DEFAULT_SANDBOX,
    "run the agent and its checks in a bubblewrap sandbox, or fail (ralph.yaml sandbox: on, off or auto, with network, read_deny, write_allow, env; default {default}: sandboxed where bubblewrap works)",
    { details: "`--no-sandbox` runs without it. See [the sandbox](../sandbox.md)." },
  ),
  option(
    "maxResolve",
    "--max-resolve <n>",
    count,
    2,
    "with --parallel: resolve iterations per child whose merge conflicts or fails the checks (default {default})",
  ),
  option(
    "resolve",
    "--resolve",
    boolean,
    false,
    "(set by --parallel) resolve a merge in the parent's integration worktree",
    { internal: true },
  ),
] as OptionSpec[];

/** A `ralph run` flag that is not a setting of its own (the notification targets, --no-sandbox, internal ones). */
export interface FlagSpec {
  flags: string;
  help: string;
  repeatable: boolean;
  internal: boolean;
}

/** The run flags read into the notification targets or onto another option rather than into a setting of their own. */
export const RUN_FLAG_SPECS: readonly FlagSpec[] = [
  {
    flags: "--notify <cmd>",
    help: 'send events to a command (the event JSON on its stdin), or "desktop" (repeatable)',
    repeatable: true,
    internal: false,
  },
  { flags: "--webhook <url>", help: "POST events to a URL (repeatable)", repeatable: true, internal: false },
  {
    flags: "--notify-events <events>",
    help: "events every --notify and --webhook hears, comma-separated (default run_ended,waiting_limit,needs_human,stalled), e.g. iteration_ended,run_ended",
    repeatable: false,
    internal: false,
  },
  {
    flags: "--webhook-format <format>",
    help: 'body of every --webhook: json (the event) or slack ({"text": …}) (default json)',
    repeatable: false,
    internal: false,
  },
  // The way out of the default sandbox (its value lands on --sandbox: false, read as off).
  {
    flags: "--no-sandbox",
    help: "run the agent and its checks without the sandbox",
    repeatable: false,
    internal: false,
  },
  // Set by a --parallel parent on its children: stdin is a pipe from it, and its end ends the child.
  {
    flags: "--watch-parent",
    help: "(set by --parallel) end when the parent's pipe closes",
    repeatable: false,
    internal: true,
  },
];

/** The option declared for `key`. */
export function runOption<K extends keyof RunSettings>(key: K): OptionSpec<K> {
  const found = RUN_OPTION_SPECS.find((spec) => spec.key === key);
  if (!found) throw new Error(`no run option ${key}`);
  return found as unknown as OptionSpec<K>;
}

/** The flag declared as `long` among the run flags that are no setting of their own. */
export function runFlag(long: string): FlagSpec {
  const found = RUN_FLAG_SPECS.find((spec) => spec.flags.split(" ")[0] === long);
  if (!found) throw new Error(`no run flag ${long}`);
  return found;
}

/** The help line of an option, its `{default}` filled in from the declared default. */
export function optionHelp(spec: OptionSpec): string {
  if (!spec.help.includes("{default}")) return spec.help;
  const shown = (spec.type as OptionType<unknown>).show(spec.defaultValue);
  return spec.help.replaceAll("{default}", shown ?? "none");
}

/** The defaults of every setting. */
export function defaultSettings(): RunSettings {
  const settings: Partial<Record<keyof RunSettings, unknown>> = {};
  for (const option of RUN_OPTION_SPECS) settings[option.key] = option.defaultValue;
  // Notification targets are not an option of their own: --notify, --webhook and ralph.yaml fill them.
  return { ...(settings as RunSettings), notifyTargets: [] };
}
