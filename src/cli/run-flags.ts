// The flags of `ralph run`: their help texts, and reading which ones the user gave. Kept light, so that
// building the command line loads nothing of the loop.
import { Option, type Command } from "commander";
import { RUN_OPTION_SPECS } from "../config/run-options.js";
import { parseRunId } from "../util/parse-value.js";

const HELP: Record<string, { flags: string; help: string }> = {
  "--prompt-file": { flags: "-p, --prompt-file <file>", help: "read the prompt from a file (default: PROMPT.md when present)" },
  "--max-iterations": { flags: "-n, --max-iterations <n>", help: "stop after N iterations with MAX_ITERATIONS (default 3; 0 = unlimited)" },
  "--completion-promise": { flags: "--completion-promise <text>", help: "end when the agent's final message holds <promise>TEXT</promise>" },
  "--check": { flags: "--check <cmd>", help: "completion criterion: a shell command that passes on exit 0 (repeatable)" },
  "--tasks": { flags: "--tasks <file>", help: "task list: prd.json (userStories[].passes) or a Markdown checklist" },
  "--agent": { flags: "--agent <name>", help: "claude, codex, gemini, opencode, demo or command (default claude)" },
  "--agent-cmd": { flags: "--agent-cmd <cmd>", help: "the command agent's command line (split into words, no shell); or give it after --" },
  "--agent-args": {
    flags: "--agent-args <args>",
    help: "extra arguments for the agent CLI, split like a shell would but with nothing expanded, passed without a shell (e.g. \"--permission-mode acceptEdits\")",
  },
  "--model": { flags: "--model <model>", help: "model passed to the agent (default: the agent's own)" },
  "--timeout": { flags: "--timeout <dur>", help: "wall-clock limit of one iteration, e.g. 90s, 15m, 2h (default 30m)" },
  "--idle-timeout": { flags: "--idle-timeout <dur>", help: "end an iteration that printed nothing for DUR (default off)" },
  "--grace": { flags: "--grace <dur>", help: "time between the polite signal and SIGKILL when ending an agent (default 5s)" },
  "--max-cost": { flags: "--max-cost <usd>", help: "stop with BUDGET_EXCEEDED once the recorded spend reaches USD" },
  "--max-tokens": { flags: "--max-tokens <n>", help: "stop with BUDGET_EXCEEDED once the run's tokens reach N (all kinds), or by kind: output=200k,input=1M" },
  "--max-runtime": { flags: "--max-runtime <dur>", help: "stop with RUNTIME_EXCEEDED once the run has lasted DUR" },
  "--max-failures": { flags: "--max-failures <n>", help: "consecutive failed iterations before FAILED (default 3)" },
  "--stall-limit": { flags: "--stall-limit <n>", help: "iterations without change to git tree, HEAD or task list before STALLED (default 3, 0 = off)" },
  "--same-failure-limit": {
    flags: "--same-failure-limit <n>",
    help: "iterations in a row with the same failure (same check output or same agent error) before FAILED (default 3, 0 = off)",
  },
  "--on-billing-error": { flags: "--on-billing-error <mode>", help: "on a billing error (credit balance too low): fail the run, or wait like a usage limit (default fail)" },
  "--preflight": { flags: "--preflight <on|off>", help: "before iteration 1, check the agent binary, the work directory and the checks' programs (default on)" },
  "--on-limit": { flags: "--on-limit <mode>", help: "on a provider usage limit: wait for the reset, or stop (default wait)" },
  "--on-ask": { flags: "--on-ask <mode>", help: "when the agent ends with <ask>QUESTION</ask>: wait for ralph answer, or continue (only log it) (default wait)" },
  "--live": { flags: "--live", help: "show the agent's messages and tool calls as they stream" },
  "--dry-run": { flags: "--dry-run", help: "never start the agent: log the argv it would run and sleep --dry-run-delay" },
  "--dry-run-delay": { flags: "--dry-run-delay <dur>", help: "how long each dry-run iteration sleeps (default 1s)" },
  "--json": { flags: "--json", help: "write the event stream to stdout instead of human output" },
  "--name": { flags: "--name <id>", help: "run id (default YYYYMMDD-HHMMSS-xxxx)" },
  "--memory-max": { flags: "--memory-max <size>", help: "memory cap of each iteration's agent tree, e.g. 2G (needs a writable cgroup)" },
  "--pids-max": { flags: "--pids-max <n>", help: "process-count cap of each iteration's agent tree (needs a writable cgroup)" },
  "--linger": { flags: "--linger <dur>", help: "end an agent still running this long after its final result (default 10s)" },
  "--fallback-agent": {
    flags: "--fallback-agent <name>",
    help: "agent to run instead while the one before it waits out a usage limit resetting later than --max-wait (repeatable, in order)",
  },
  "--max-wait": { flags: "--max-wait <dur>", help: "longest usage-limit wait before switching to a --fallback-agent (default 0: switch at once)" },
  "--worktree": { flags: "--worktree", help: "work in a git worktree .ralph/worktrees/RUN on a new branch ralph/RUN from HEAD; your checkout is never touched" },
  "--commit": { flags: "--commit <policy>", help: "iteration: commit each iteration's changes on the run's branch; off (default iteration with --worktree, else off)" },
  "--task": { flags: "--task <id>", help: "with --tasks: work on this one task only (its id, or its line in a checklist); ends DONE once it is marked done" },
  "--task-index": {
    flags: "--task-index <n>",
    help: "with --tasks: work on the Nth task only (0-based, file order), whatever the others' state; job: N from JOB_COMPLETION_INDEX (a Kubernetes Indexed Job). The run is named after the task, so --worktree works on branch ralph/TASK-ID",
  },
  "--parent": { flags: "--parent <run>", help: "(set by --parallel) the run that started this one" },
  "--sandbox": {
    flags: "--sandbox",
    help: "run the agent and its checks in a bubblewrap sandbox, or fail (ralph.yaml sandbox: on, off or auto, with network, read_deny, write_allow, env; default auto: sandboxed where bubblewrap works)",
  },
  "--max-resolve": { flags: "--max-resolve <n>", help: "with --parallel: resolve iterations per child whose merge conflicts or fails the checks (default 2)" },
  "--resolve": { flags: "--resolve", help: "(set by --parallel) resolve a merge in the parent's integration worktree" },
  "--parallel": { flags: "--parallel <n>", help: "with --tasks: up to N child runs at once, each on one pending task in its own worktree and branch" },
};

/** Options read into the notification targets rather than into a setting of their own. */
const NOTIFY_HELP: ReadonlyArray<{ flags: string; help: string; repeatable: boolean }> = [
  { flags: "--notify <cmd>", help: "send events to a command (the event JSON on its stdin), or \"desktop\" (repeatable)", repeatable: true },
  { flags: "--webhook <url>", help: "POST events to a URL (repeatable)", repeatable: true },
  {
    flags: "--notify-events <events>",
    help: "events every --notify and --webhook hears, comma-separated (default run_ended,waiting_limit,needs_human,stalled), e.g. iteration_ended,run_ended",
    repeatable: false,
  },
  { flags: "--webhook-format <format>", help: "body of every --webhook: json (the event) or slack ({\"text\": …}) (default json)", repeatable: false },
];

/** Options given more than once collect every value, in order. */
const REPEATABLE = new Set(["--check", "--fallback-agent"]);

function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

/** Adds every `ralph run` option to a command. */
export function addRunOptions(command: Command): Command {
  for (const spec of RUN_OPTION_SPECS) {
    const help = HELP[spec.flag];
    if (!help) throw new Error(`no help for ${spec.flag}`);
    const option = new Option(help.flags, help.help);
    if (REPEATABLE.has(spec.flag)) option.argParser(collect);
    if (spec.flag === "--parent" || spec.flag === "--resolve") option.hideHelp();
    command.addOption(option);
  }
  for (const { flags, help, repeatable } of NOTIFY_HELP) {
    const option = new Option(flags, help);
    if (repeatable) option.argParser(collect);
    command.addOption(option);
  }
  // The way out of the default sandbox (its value lands on --sandbox: false, read as off).
  command.addOption(new Option("--no-sandbox", "run the agent and its checks without the sandbox"));
  // Set by a --parallel parent on its children: stdin is a pipe from it, and its end ends the child.
  command.addOption(new Option("--watch-parent").hideHelp());
  return command;
}

/**
 * A `--name` followed by a word starting with `-` (`--name -V`): the parser would take that word for a flag
 * (or for the value), so it is refused up front with what a run id must be.
 */
export function dashedName(words: readonly string[]): string | null {
  const at = words.indexOf("--name");
  const value = at === -1 ? undefined : words[at + 1];
  if (value === undefined || !value.startsWith("-")) return null;
  const parsed = parseRunId(value);
  return parsed.ok ? null : `--name: expected ${parsed.expected}, got ${JSON.stringify(value)}`;
}

/** The flags the user actually gave, keyed by long flag name. */
export function givenFlags(command: Command): Map<string, unknown> {
  const flags = new Map<string, unknown>();
  for (const option of command.options) {
    const name = option.attributeName();
    if (option.long && command.getOptionValueSource(name) === "cli") flags.set(option.long, command.getOptionValue(name));
  }
  return flags;
}
