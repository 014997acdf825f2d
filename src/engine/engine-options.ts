// What the engine is asked to run, and where it works.
import type { RunSettings } from "../config/run-options.js";
import type { Plan } from "../store/plan-file.js";
import type { RunStatus } from "../store/status-file.js";

/** What to run. */
export interface EngineOptions {
  projectDir: string;
  runId: string;
  settings: RunSettings;
  /** The plan written to state.md at the start (ignored when continuing: the file is re-read). */
  plan: Plan;
  /** The previous status when continuing a run (`ralph continue`), to keep its counters. */
  previous: RunStatus | null;
  /** Lines to log at the start (e.g. a stale lock that was taken over). */
  notes?: string[];
  /** Where the agent, the checks and the task list work: the run's worktree, else the project directory. */
  workDir?: string;
  /** The run's git worktree and branch (`--worktree`), recorded in status.json and run_started. */
  worktree?: { path: string; branch: string; base?: string | null; baseBranch?: string | null } | null;
  /** Commit each iteration's changes on the run's branch (`--commit iteration`). */
  commit?: boolean;
  /** The run that started this one as a child (`--parallel`). */
  parent?: string | null;
}

/** The directory a run works in: its worktree when it has one, else the project. */
export function workDirOf(options: Pick<EngineOptions, "projectDir" | "workDir">): string {
  return options.workDir ?? options.projectDir;
}
