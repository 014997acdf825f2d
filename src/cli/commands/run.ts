// `ralph run`: resolve options and the prompt, validate everything, then start the loop.
import { existsSync, realpathSync } from "node:fs";
import { readRegular, RunFileError } from "../../store/regular-file.js";
import { isAbsolute, join, relative, resolve } from "node:path";
import type { Command } from "commander";
import { loadRalphYaml } from "../../config/ralph-yaml.js";
import { notifyTargetsFromFlags, notifyTargetsFromRalphYaml } from "../../notify/notify-config.js";
import { runOption, type RunSettings } from "../../config/run-options.js";
import { givenFlags } from "../run-flags.js";
import { resolveSettings } from "../../config/resolve-settings.js";
import { parseCriteria } from "../../store/plan-fields.js";
import { loadTasks } from "../../judge/tasks.js";
import { generateRunId, runPaths } from "../../store/run-paths.js";
import type { Plan } from "../../store/plan-file.js";
import type { Criterion } from "../../store/plan-fields.js";
import { findProject } from "../find-project.js";
import { startRun } from "../../launch/start-run.js";
import { launchWords } from "../launch-words.js";
import { preflight } from "../../launch/preflight.js";
import { UsageError } from "../usage-error.js";
import { commitPolicy } from "../../launch/run-worktree.js";
import { checkSettings } from "../../config/check-settings.js";
import { pickTaskByIndex } from "../../launch/task-index.js";
import { parseSandbox } from "../../sandbox/sandbox-policy.js";
import { PROMPT_TEMPLATE_LINE } from "./init.js";
import { readBudgets } from "../../spend/budget-config.js";

/**
 * Resolves settings from flags, RALPH_* env and ralph.yaml, or throws a UsageError. Paths in flags are read
 * from `typedIn`, the directory the person typed them in (ralph.yaml's from the project): a file flag becomes
 * a path relative to the project (absolute when outside it), and a `--check` or `--notify` command line runs
 * in that directory.
 */
export function loadSettings(
  command: Command,
  projectDir: string,
  env: NodeJS.ProcessEnv,
  typedIn = projectDir,
): { settings: RunSettings; criteria: Criterion[]; checksDir: string | null } {
  const yaml = loadRalphYaml(join(projectDir, "ralph.yaml"));
  if (!yaml.ok) throw new UsageError(yaml.message);
  const flags = typedPaths(givenFlags(command), projectDir, typedIn);
  const resolved = resolveSettings(flags, env, yaml.defaults);
  if (!resolved.ok) throw new UsageError(resolved.message);
  // ralph.yaml's targets and the flags' targets all hear their events: a flag adds a target, it replaces none.
  const fromYamlTargets = notifyTargetsFromRalphYaml(yaml.defaults);
  if (!fromYamlTargets.ok) throw new UsageError(fromYamlTargets.message);
  const fromFlags = notifyTargetsFromFlags({
    notify: flags.get("--notify") as string[] | undefined,
    webhook: flags.get("--webhook") as string[] | undefined,
    webhookFormat: flags.get("--webhook-format") as string | undefined,
    notifyEvents: flags.get("--notify-events") as string | undefined,
  });
  if (!fromFlags.ok) throw new UsageError(fromFlags.message);
  const dir = typedDir(projectDir, typedIn);
  const flagTargets = fromFlags.targets.map((target) =>
    target.kind === "command" && dir !== null ? { ...target, dir } : target,
  );
  const notifyTargets = [...fromYamlTargets.targets, ...flagTargets];
  // The project's and the user's budgets (src/spend/budget-config.ts): a bad one is a usage error before any run starts.
  const budgets = readBudgets(projectDir, env);
  if (!budgets.ok) throw new UsageError(budgets.message);
  const fromYaml = yaml.defaults.values.get("completion_criteria");
  let criteria: Criterion[] = [];
  if (fromYaml) {
    const parsed = parseCriteria(fromYaml.value, `${yaml.defaults.file}: line ${fromYaml.line}: completion_criteria`);
    if (!parsed.ok) throw new UsageError(parsed.message);
    criteria = parsed.criteria;
  }
  const settings = {
    ...resolved.settings,
    notifyTargets,
    sandbox: sandboxWithYamlPolicy(resolved.settings, yaml.defaults.values.get(runOption("sandbox").yaml ?? "")?.value),
  };
  return { settings, criteria, checksDir: flags.has("--check") ? dir : null };
}

/** `typedIn` relative to the project, or null when it is the project itself (or outside it). */
function typedDir(projectDir: string, typedIn: string): string | null {
  const dir = relative(projectDir, typedIn);
  return dir === "" || dir.startsWith("..") || isAbsolute(dir) ? null : dir;
}

/** `path` as typed in `typedIn`: relative to the project when inside it, else absolute. */
export function typedPath(path: string, projectDir: string, typedIn: string): string {
  const full = resolve(typedIn, path);
  const inside = relative(projectDir, full);
  return inside === "" || inside.startsWith("..") || isAbsolute(inside) ? full : inside;
}

/** The flags with the file paths read from where they were typed. */
function typedPaths(flags: Map<string, unknown>, projectDir: string, typedIn: string): Map<string, unknown> {
  for (const flag of ["--prompt-file", "--tasks"]) {
    const value = flags.get(flag);
    if (typeof value === "string" && value.trim() !== "") flags.set(flag, typedPath(value, projectDir, typedIn));
  }
  return flags;
}

/** `--sandbox` or RALPH_SANDBOX chooses the mode; the network, paths and variables still come from ralph.yaml. */
function sandboxWithYamlPolicy(settings: RunSettings, fromYaml: unknown): RunSettings["sandbox"] {
  const policy = fromYaml === undefined ? null : parseSandbox(fromYaml);
  return policy?.ok ? { ...policy.value, mode: settings.sandbox.mode } : settings.sandbox;
}

/** The largest prompt file ralph reads (Gemini CLI, for one, takes at most 8 MB on stdin). */
const MAX_PROMPT_BYTES = 8 * 1024 * 1024;

/** The prompt's bytes from words, --prompt-file, or PROMPT.md, or a UsageError (also for an empty one: the agent would get no task). */
export function resolvePrompt(words: string[], settings: RunSettings, projectDir: string): Buffer {
  if (words.length > 0 && settings.promptFile)
    throw new UsageError("give the prompt as words or with --prompt-file, not both");
  if (words.length > 0) {
    const prompt = Buffer.from(words.join(" "));
    if (prompt.toString("utf8").trim() === "")
      throw new UsageError(
        'the prompt is empty: expected the task in words (ralph run "fix the failing tests"), with --prompt-file FILE, or in PROMPT.md',
      );
    return prompt;
  }
  const file = settings.promptFile ?? (existsSync(join(projectDir, "PROMPT.md")) ? "PROMPT.md" : null);
  if (!file) throw new UsageError("no prompt: give it as words, with --prompt-file FILE, or in PROMPT.md");
  let prompt: Buffer;
  try {
    // Links are fine here (the file is the user's), but a FIFO or device would block or never end.
    prompt = readPromptFile(resolve(projectDir, file));
  } catch (error) {
    const detail =
      error instanceof RunFileError
        ? error.message.slice(error.message.lastIndexOf(": ") + 2)
        : `cannot be read (${(error as NodeJS.ErrnoException).code ?? "error"})`;
    throw new UsageError(
      `--prompt-file ${resolve(projectDir, file)}: ${detail}; expected a regular file of at most 8 MB`,
    );
  }
  if (prompt.toString("utf8").trim() === "")
    throw new UsageError(
      `${settings.promptFile ? "--prompt-file " : ""}${resolve(projectDir, file)} is empty: expected the task for the agent in it`,
    );
  return prompt;
}

/** The run's first plan (state.md), after checking the task list and criteria; `checksDir` is where `--check` was typed. */
export function initialPlan(
  settings: RunSettings,
  criteria: Criterion[],
  prompt: Buffer,
  projectDir: string,
  checksDir: string | null = null,
): Plan {
  if (settings.tasks) {
    const file = resolve(projectDir, settings.tasks);
    const tasks = loadTasks(file);
    if (!tasks.ok) throw new UsageError(`--tasks ${file}: ${tasks.message}`);
    if (settings.task && !tasks.tasks.some((task) => task.id === settings.task)) {
      throw new UsageError(
        `--task ${settings.task}: no task with that id in ${file} (ids: ${tasks.tasks.map((task) => task.id).join(", ")})`,
      );
    }
  }
  return {
    active: true,
    maxIterations: settings.maxIterations,
    completionPromise: settings.completionPromise,
    completionCriteria: [
      ...criteria,
      ...settings.checks.map((check) => ({
        type: "command",
        check,
        ...(checksDir === null ? {} : { dir: checksDir }),
      })),
    ],
    tasks: settings.tasks,
    prompt,
  };
}

/** `ralph run [PROMPT...]`: everything is validated before anything is created. */
export async function runCommand(words: string[], command: Command, trailing: string[] | null): Promise<number> {
  const projectDir = findProject(process.cwd());
  const loaded = loadSettings(command, projectDir, process.env, process.cwd());
  const trailingWords = trailing ?? [];
  const agent = runOption("agent");
  const agentGiven =
    givenFlags(command).has(agent.flag) || (agent.env !== null && process.env[agent.env] !== undefined);
  const checked = checkSettings(loaded.settings, { trailing, agentGiven });
  if (!checked.ok) throw new UsageError(checked.message);
  const misplaced = ralphFlagsIn(trailingWords, command);
  if (misplaced.length > 0) {
    process.stderr.write(
      `ralph: warning: ${misplaced.join(", ")} after -- ${misplaced.length === 1 ? "goes" : "go"} to the agent command, not to ralph; put ralph's options before --\n`,
    );
  }
  const picked = pickTaskByIndex(checked.settings, projectDir, process.env);
  const settings = { ...picked, commit: commitPolicy(picked) };
  const prompt = resolvePrompt(words, settings, projectDir);
  if (prompt.toString("utf8").includes(PROMPT_TEMPLATE_LINE)) {
    process.stderr.write(
      `ralph: warning: the prompt is still ralph init's template (${settings.promptFile ?? "PROMPT.md"}): write the task into it first, or the agent gets no task\n`,
    );
  }
  const plan = initialPlan(settings, loaded.criteria, prompt, projectDir, loaded.checksDir);
  // Before anything is created: what would make iteration 1 fail at once is a usage error that says how to fix it.
  preflight(settings, plan, projectDir, process.env);
  const runId = settings.name ?? generateRunId(new Date());
  if (existsSync(runPaths(projectDir, runId).dir))
    throw new UsageError(`--name ${runId}: a run with this id already exists (use ralph continue ${runId})`);
  // A run named after its task (--task-index) is named like one given --name: runs on other tasks may go beside it.
  return startRun(
    { projectDir, runId, settings, plan, previous: null, projectLock: settings.name === null },
    launchWords,
  );
}

/** Reads a prompt file through any link the user made, refusing what is not a regular file or is too large. */
function readPromptFile(file: string): Buffer {
  return readRegular(realpathSync(file), MAX_PROMPT_BYTES);
}

// Options agent CLIs commonly have too: after `--` they are most likely meant for the agent.
const SHARED_WITH_AGENTS = new Set([
  "--model",
  "--timeout",
  "--json",
  "--name",
  "--help",
  "--check",
  "--task",
  "--live",
]);

/** The words after `--` that are ralph run options (`--completion-promise DONE` placed too late). */
function ralphFlagsIn(trailing: string[], command: Command): string[] {
  const ours = new Set(
    command.options
      .map((option) => option.long)
      .filter((long): long is string => long !== undefined && !SHARED_WITH_AGENTS.has(long)),
  );
  return [...new Set(trailing.map((word) => word.split("=")[0] ?? word).filter((word) => ours.has(word)))];
}
