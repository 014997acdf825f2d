// Completion criteria ({type, check}): shell commands, file checks, globs and the task list.
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { runCheckCommand } from "./run-check-command.js";
import type { SpawnTree } from "../process/run-supervised.js";
import { describeTask, firstIncomplete, loadTasks } from "./tasks.js";
import type { Criterion } from "../store/plan-fields.js";
import { formatDuration } from "../util/parse-value.js";
import { fenceFor } from "../util/fence-for.js";
import { clip } from "../util/clip.js";

export { parseCriteria, type Criterion } from "../store/plan-fields.js";

/** The outcome of one criterion. */
export interface CriterionVerdict {
  type: string;
  check: string;
  passed: boolean;
  /** One line saying why it passed or failed. */
  detail: string;
  /** The last bytes of a command's stdout+stderr (interleaved), or the matching files for `no_files`. */
  outputTail: string;
  durationMs: number;
  exitCode?: number | null;
  timedOut?: boolean;
  /** True when the check was not run because the run was aborted or an earlier one failed. */
  skipped?: boolean;
}

/** Where and how criteria are checked. */
export interface CriteriaContext {
  /** The project directory: commands run here and paths and globs are relative to it. */
  cwd: string;
  /** The run's task list, used by `tasks_done` when its `check` names no file. */
  tasksFile?: string;
  /** Limit for one command check (default 10 minutes, 0 = none); its process group is then killed. */
  timeoutMs?: number;
  /** How much of a command's output is kept, from the end (default 64 KiB). */
  outputCapBytes?: number;
  /** The environment of command checks. */
  env: NodeJS.ProcessEnv;
  /** Aborting kills a running command check; the checks after it are skipped. */
  signal?: AbortSignal;
  /** Starts each command check's tree (the run's supervision: a cgroup of its own); tree mode when absent. */
  spawn?: SpawnTree;
  /** Skip the remaining checks once one fails (default: run them all, so every failure is reported). */
  stopAtFirstFailure?: boolean;
}

/** Default limit for one command check. */
export const DEFAULT_CHECK_TIMEOUT_MS = 10 * 60 * 1000;
/** Default amount of command output kept. */
export const DEFAULT_OUTPUT_CAP_BYTES = 64 * 1024;

/** Checks the criteria one after another, in order. */
export async function checkCriteria(criteria: Criterion[], context: CriteriaContext): Promise<CriterionVerdict[]> {
  const verdicts: CriterionVerdict[] = [];
  for (const criterion of criteria) {
    const why = context.signal?.aborted
      ? "not run: the run was stopped"
      : context.stopAtFirstFailure && verdicts.some((v) => !v.passed)
        ? "not run: an earlier check failed"
        : null;
    if (why !== null) {
      verdicts.push({ ...criterion, passed: false, detail: why, outputTail: "", durationMs: 0, skipped: true });
      continue;
    }
    const started = performance.now();
    const verdict = await checkOne(criterion, context);
    verdicts.push({ ...criterion, ...verdict, durationMs: Math.round(performance.now() - started) });
  }
  return verdicts;
}

type Outcome = Omit<CriterionVerdict, "type" | "check" | "durationMs">;

async function checkOne(criterion: Criterion, given: CriteriaContext): Promise<Outcome> {
  const { type, check } = criterion;
  // A check typed in a subdirectory runs there, in whichever tree the run works in.
  const context = criterion.dir === undefined ? given : { ...given, cwd: resolve(given.cwd, criterion.dir) };
  switch (type) {
    case "file_exists": {
      if (check.trim() === "") return { passed: false, detail: "no path given", outputTail: "" };
      const exists = existsSync(resolve(context.cwd, check));
      return { passed: exists, detail: exists ? `${check} exists` : `${check} does not exist`, outputTail: "" };
    }
    case "no_files":
      return checkNoFiles(check, context);
    case "tasks_done":
      return checkTasksDone(check, context);
    case "review":
      // A reviewer is an agent: `ralph run` runs it once the other criteria pass (src/engine/reviewing.ts).
      return {
        passed: false,
        detail: "not run: a review runs only in ralph run, after the other criteria pass",
        outputTail: "",
      };
    default:
      return checkCommand(check, context);
  }
}

async function checkNoFiles(pattern: string, context: CriteriaContext): Promise<Outcome> {
  if (pattern.trim() === "") return { passed: false, detail: "no glob given", outputTail: "" };
  let matches: string[];
  try {
    // Loaded at the first such check, not with every run (the library sets up a good deal at its load).
    const { glob } = await import("tinyglobby");
    matches = await glob(pattern, { cwd: context.cwd, onlyFiles: true });
  } catch (error) {
    return { passed: false, detail: `cannot match ${pattern}: ${errorText(error)}`, outputTail: "" };
  }
  if (matches.length === 0) return { passed: true, detail: `nothing matches ${pattern}`, outputTail: "" };
  matches.sort();
  const shown = matches.slice(0, 5).join(", ") + (matches.length > 5 ? ", …" : "");
  const noun = matches.length === 1 ? "file matches" : "files match";
  return { passed: false, detail: `${matches.length} ${noun} ${pattern}: ${shown}`, outputTail: matches.join("\n") };
}

function checkTasksDone(check: string, context: CriteriaContext): Outcome {
  const file = check.trim() !== "" ? check.trim() : context.tasksFile;
  if (file === undefined)
    return { passed: false, detail: "no task list: name the file in the check or use --tasks", outputTail: "" };
  const result = loadTasks(resolve(context.cwd, file));
  if (!result.ok) return { passed: false, detail: `${file} ${result.message}`, outputTail: "" };
  const left = result.tasks.filter((task) => !task.done).length;
  const next = firstIncomplete(result.tasks);
  if (next === null)
    return { passed: true, detail: `all ${result.tasks.length} tasks in ${file} are done`, outputTail: "" };
  return {
    passed: false,
    detail: `${left} of ${result.tasks.length} tasks in ${file} left; next: ${describeTask(next)}`,
    outputTail: "",
  };
}

async function checkCommand(command: string, context: CriteriaContext): Promise<Outcome> {
  if (command.trim() === "") return { passed: false, detail: "no command given", outputTail: "" };
  if (!existsSync(context.cwd))
    return { passed: false, detail: `could not start: ${context.cwd} does not exist`, outputTail: "", exitCode: null };
  const timeoutMs = context.timeoutMs ?? DEFAULT_CHECK_TIMEOUT_MS;
  const run = await runCheckCommand(
    command,
    {
      cwd: context.cwd,
      env: context.env,
      signal: context.signal,
      outputCapBytes: context.outputCapBytes ?? DEFAULT_OUTPUT_CAP_BYTES,
      spawn: context.spawn,
    },
    timeoutMs,
  );
  const outputTail = run.output;
  if (run.error !== undefined)
    return { passed: false, detail: `could not start: ${run.error}`, outputTail, exitCode: null };
  if (run.timedOut) {
    const detail = `timed out after ${formatDuration(timeoutMs)}; its process group was killed`;
    return { passed: false, detail, outputTail, exitCode: run.exitCode, timedOut: true };
  }
  if (run.aborted)
    return {
      passed: false,
      detail: "stopped before it finished: the run was stopped",
      outputTail,
      exitCode: run.exitCode,
    };
  const detail = run.exitCode !== null ? `exit ${run.exitCode}` : `killed by ${run.signal ?? "a signal"}`;
  return { passed: run.exitCode === 0, detail, outputTail, exitCode: run.exitCode };
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Text for the next prompt: which checks failed and the tail of their output, at most `maxChars` long. */
export function failingContext(verdicts: CriterionVerdict[], maxChars = 4000): string {
  const failed = verdicts.filter((verdict) => !verdict.passed && verdict.skipped !== true);
  if (failed.length === 0) return "";
  const lines = ["The completion criteria are not met yet. These checks failed:"];
  for (const verdict of failed) lines.push(`- ${labelOf(verdict)}: ${verdict.detail}`);
  let text = lines.join("\n");
  const withOutput = failed.filter((verdict) => verdict.outputTail.trim() !== "");
  const overhead = 40;
  const share = Math.floor((maxChars - text.length) / Math.max(1, withOutput.length)) - overhead;
  if (share >= 80) {
    for (const verdict of withOutput) {
      let tail = verdict.outputTail.replace(/\s+$/, "");
      if (tail.length > share) tail = `…${tail.slice(tail.length - share + 1)}`;
      const fence = fenceFor(tail, "`");
      text += `\n\nLast output of ${labelOf(verdict)}:\n${fence}\n${tail}\n${fence}`;
    }
  }
  return clip(text, maxChars);
}

function labelOf(verdict: CriterionVerdict): string {
  if (verdict.type === "command") return `\`${verdict.check}\``;
  return verdict.check === "" ? verdict.type : `${verdict.type} \`${verdict.check}\``;
}
