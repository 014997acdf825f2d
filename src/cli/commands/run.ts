// `ralph run`: resolve options and the prompt, validate everything, then start the loop.
import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { Command, Option } from "commander";
import { loadRalphYaml } from "../../config/ralph-yaml.js";
import { RUN_OPTION_SPECS, type RunSettings } from "../../config/run-options.js";
import { resolveSettings } from "../../config/resolve-settings.js";
import { parseCriteria } from "../../loop/criteria.js";
import { loadTasks } from "../../loop/tasks.js";
import { generateRunId, runPaths } from "../../store/run-paths.js";
import type { CriterionSpec, RunState } from "../../store/state-file.js";
import { startRun } from "../start-run.js";
import { UsageError } from "../usage-error.js";

const HELP: Record<string, { flags: string; help: string }> = {
  "--prompt-file": { flags: "-p, --prompt-file <file>", help: "read the prompt from a file (default: PROMPT.md when present)" },
  "--max-iterations": { flags: "-n, --max-iterations <n>", help: "stop after N iterations with MAX_ITERATIONS (default 3; 0 = unlimited)" },
  "--completion-promise": { flags: "--completion-promise <text>", help: "end when the agent's final message holds <promise>TEXT</promise>" },
  "--check": { flags: "--check <cmd>", help: "completion criterion: a shell command that passes on exit 0 (repeatable)" },
  "--tasks": { flags: "--tasks <file>", help: "task list: prd.json (userStories[].passes) or a Markdown checklist" },
  "--agent": { flags: "--agent <name>", help: "claude, codex, gemini, opencode, demo or command (default claude)" },
  "--agent-cmd": { flags: "--agent-cmd <cmd>", help: "the command agent's command line (split into words, no shell); or give it after --" },
  "--model": { flags: "--model <model>", help: "model passed to the agent (default: the agent's own)" },
  "--timeout": { flags: "--timeout <dur>", help: "wall-clock limit of one iteration, e.g. 90s, 15m, 2h (default 30m)" },
  "--idle-timeout": { flags: "--idle-timeout <dur>", help: "end an iteration that printed nothing for DUR (default off)" },
  "--grace": { flags: "--grace <dur>", help: "time between the polite signal and SIGKILL when ending an agent (default 5s)" },
  "--max-cost": { flags: "--max-cost <usd>", help: "stop with BUDGET_EXCEEDED once the recorded spend reaches USD" },
  "--max-runtime": { flags: "--max-runtime <dur>", help: "stop with RUNTIME_EXCEEDED once the run has lasted DUR" },
  "--max-failures": { flags: "--max-failures <n>", help: "consecutive failed iterations before FAILED (default 3)" },
  "--stall-limit": { flags: "--stall-limit <n>", help: "iterations without change to git tree, HEAD or task list before STALLED (default 0 = off)" },
  "--on-limit": { flags: "--on-limit <mode>", help: "on a provider usage limit: wait for the reset, or stop (default wait)" },
  "--live": { flags: "--live", help: "show the agent's messages and tool calls as they stream" },
  "--dry-run": { flags: "--dry-run", help: "never start the agent: log the argv it would run and sleep --dry-run-delay" },
  "--dry-run-delay": { flags: "--dry-run-delay <dur>", help: "how long each dry-run iteration sleeps (default 1s)" },
  "--json": { flags: "--json", help: "write the event stream to stdout instead of human output" },
  "--name": { flags: "--name <id>", help: "run id (default YYYYMMDD-HHMMSS-xxxx)" },
};

/** Adds every `ralph run` option to a command. */
export function addRunOptions(command: Command): Command {
  for (const spec of RUN_OPTION_SPECS) {
    const help = HELP[spec.flag];
    if (!help) throw new Error(`no help for ${spec.flag}`);
    const option = new Option(help.flags, help.help);
    if (spec.flag === "--check") option.argParser((value: string, previous: string[] | undefined) => [...(previous ?? []), value]);
    command.addOption(option);
  }
  return command;
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

/** Resolves settings from flags, RALPH_* env and ralph.yaml, or throws a UsageError. */
export function loadSettings(command: Command, projectDir: string, env: NodeJS.ProcessEnv): { settings: RunSettings; criteria: CriterionSpec[] } {
  const yaml = loadRalphYaml(join(projectDir, "ralph.yaml"));
  if (!yaml.ok) throw new UsageError(yaml.message);
  const resolved = resolveSettings(givenFlags(command), env, yaml.defaults);
  if (!resolved.ok) throw new UsageError(resolved.message);
  const fromYaml = yaml.defaults.values.get("completion_criteria");
  let criteria: CriterionSpec[] = [];
  if (fromYaml) {
    const parsed = parseCriteria(fromYaml.value, `${yaml.defaults.file}: line ${fromYaml.line}: completion_criteria`);
    if (!parsed.ok) throw new UsageError(parsed.message);
    criteria = parsed.criteria;
  }
  return { settings: resolved.settings, criteria };
}

/** The prompt from words, --prompt-file, or PROMPT.md, or a UsageError. */
export function resolvePrompt(words: string[], settings: RunSettings, projectDir: string): string {
  if (words.length > 0 && settings.promptFile) throw new UsageError("give the prompt as words or with --prompt-file, not both");
  if (words.length > 0) return words.join(" ");
  const file = settings.promptFile ?? (existsSync(join(projectDir, "PROMPT.md")) ? "PROMPT.md" : null);
  if (!file) throw new UsageError("no prompt: give it as words, with --prompt-file FILE, or in PROMPT.md");
  try {
    return readFileSync(resolve(projectDir, file), "utf8");
  } catch (error) {
    throw new UsageError(`--prompt-file ${file}: cannot be read (${(error as NodeJS.ErrnoException).code ?? "error"})`);
  }
}

/** Checks the agent choice against `-- CMD ARGS` and --agent-cmd; returns the settings to run with. */
export function settleAgent(settings: RunSettings, trailing: string[] | null, agentGiven: boolean): RunSettings {
  if (trailing && trailing.length === 0) throw new UsageError("-- must be followed by a command and its arguments");
  if (trailing && settings.agentCmd) throw new UsageError("give the command with --agent-cmd or after --, not both");
  const agentCmd = trailing ?? settings.agentCmd;
  if (agentCmd && agentGiven && settings.agent !== "command") {
    throw new UsageError(`--agent ${settings.agent} does not take a command; use --agent command (or leave --agent out)`);
  }
  const agent = agentCmd ? "command" : settings.agent;
  if (agent === "command" && !agentCmd) throw new UsageError("--agent command needs --agent-cmd CMD or -- CMD ARGS");
  return { ...settings, agent, agentCmd };
}

/** The run's first state.md, after checking the task list and criteria. */
export function initialState(settings: RunSettings, criteria: CriterionSpec[], prompt: string, projectDir: string): RunState {
  if (settings.tasks) {
    const tasks = loadTasks(resolve(projectDir, settings.tasks));
    if (!tasks.ok) throw new UsageError(`--tasks ${settings.tasks}: ${tasks.message}`);
  }
  return {
    active: true,
    maxIterations: settings.maxIterations,
    completionPromise: settings.completionPromise,
    completionCriteria: [...criteria, ...settings.checks.map((check) => ({ type: "command", check }))],
    tasks: settings.tasks,
    prompt,
  };
}

/** `ralph run [PROMPT...]`: everything is validated before anything is created. */
export async function runCommand(words: string[], command: Command, trailing: string[] | null): Promise<number> {
  const projectDir = process.cwd();
  const loaded = loadSettings(command, projectDir, process.env);
  const settings = settleAgent(loaded.settings, trailing, givenFlags(command).has("--agent") || process.env.RALPH_AGENT !== undefined);
  const prompt = resolvePrompt(words, settings, projectDir);
  const state = initialState(settings, loaded.criteria, prompt, projectDir);
  const runId = settings.name ?? generateRunId(new Date());
  if (existsSync(runPaths(projectDir, runId).dir)) throw new UsageError(`--name ${runId}: a run with this id already exists (use ralph continue ${runId})`);
  return startRun({ projectDir, runId, settings, state, previous: null, projectLock: settings.name === null });
}
