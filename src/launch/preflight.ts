// The preflight before iteration 1: the agent's program is there, the work directory is writable, and the
// checks' programs are found. A failure is a LaunchFailure (cli says how to fix it); nothing has been created yet.
import { accessSync, constants } from "node:fs";
import { tmpdir } from "node:os";
import { resolve } from "node:path";
import { adapterFor } from "../agents/adapters.js";
import type { AgentName } from "../agents/types.js";
import type { RunSettings } from "../config/run-options.js";
import type { Plan } from "../store/plan-file.js";
import { findOnPath } from "../process/supervision.js";
import { LaunchFailure, type PreflightProblem } from "./launch-failure.js";

// Words a shell runs itself: a check starting with one of them names no program to look for.
const SHELL_WORDS = new Set([
  "!",
  "{",
  "(",
  "[",
  "[[",
  ":",
  ".",
  "true",
  "false",
  "test",
  "echo",
  "printf",
  "exit",
  "cd",
  "set",
  "export",
  "unset",
  "source",
  "eval",
  "exec",
  "command",
  "type",
  "read",
  "if",
  "for",
  "while",
  "until",
  "case",
  "time",
  "env",
]);

/** Throws a LaunchFailure naming the first thing that would make iteration 1 fail at once. */
export function preflight(settings: RunSettings, plan: Plan, projectDir: string, env: NodeJS.ProcessEnv): void {
  if (settings.preflight === "off" || settings.dryRun) return;
  const fail = (problem: PreflightProblem) => new LaunchFailure({ kind: "preflight", problem });
  for (const agent of [settings.agent, ...settings.fallbackAgents]) {
    const program = agentProgram(agent, settings, projectDir, env);
    if (program === null || found(resolve(projectDir, program), env, program)) continue;
    throw fail({ kind: "agent-missing", agent, program });
  }
  try {
    accessSync(projectDir, constants.W_OK);
  } catch {
    throw fail({ kind: "not-writable", dir: projectDir });
  }
  for (const criterion of plan.completionCriteria) {
    if (criterion.review) {
      const { agent, command } = criterion.review;
      const program = agentProgram(agent, { agentCmd: command, model: null }, projectDir, env);
      if (program === null || found(resolve(projectDir, program), env, program)) continue;
      throw fail({ kind: "reviewer-missing", check: criterion.check, agent, program });
    }
    if (criterion.type === "file_exists" || criterion.type === "no_files" || criterion.type === "tasks_done") continue;
    const program = firstProgram(criterion.check);
    if (program === null || found(program, env)) continue;
    throw fail({ kind: "check-missing", check: criterion.check, program });
  }
}

/** The program the agent's invocation starts, or null for the built-in demo agent. */
function agentProgram(
  agent: AgentName,
  settings: Pick<RunSettings, "agentCmd" | "model">,
  projectDir: string,
  env: NodeJS.ProcessEnv,
): string | null {
  if (agent === "demo") return null;
  const { argv } = adapterFor(agent).invocation({
    prompt: "",
    cwd: projectDir,
    env,
    scratchDir: tmpdir(),
    ...(settings.agentCmd ? { commandArgv: settings.agentCmd } : {}),
    ...(settings.model ? { model: settings.model } : {}),
  });
  return argv[0] ?? null;
}

/** Whether `program` (a path, or a name `given` bare, looked up on PATH) can be run. */
function found(program: string, env: NodeJS.ProcessEnv, given = program): boolean {
  if (!given.includes("/")) return findOnPath(given, env.PATH ?? "") !== null;
  try {
    accessSync(program, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The program a simple check command line starts with, or null when the shell decides (a builtin, a path, syntax). */
function firstProgram(check: string): string | null {
  const word = /^\s*([A-Za-z0-9_][A-Za-z0-9_.+-]*)(?=\s|$|;|\|)/.exec(check)?.[1];
  if (!word || SHELL_WORDS.has(word)) return null;
  return word;
}
