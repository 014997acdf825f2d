// What `ralph run` and `ralph continue` ask the runner to start.
import type { RunSettings } from "../config/run-options.js";
import type { RunResult } from "../run/finish-run.js";
import type { Plan } from "../store/plan-file.js";
import type { RunStatus } from "../store/status-file.js";

/** What to start. */
export interface StartRunInput {
  projectDir: string;
  runId: string;
  settings: RunSettings;
  plan: Plan;
  previous: RunStatus | null;
  /** Take the project-wide lock too (runs started without --name). */
  projectLock: boolean;
  /** Changes to make to the run directory once its locks are held (`ralph continue`). */
  prepare?: () => void;
  /** The project is removed after the run (`ralph demo`): the summary names no run directory or next command in it. */
  temporary?: boolean;
  /** Extra lines printed after the summary (human mode only). */
  epilogue?: (result: RunResult) => string[];
  /** Stdin is a pipe from the parent run: its end (the parent died) ends this run like SIGTERM. */
  watchParent?: boolean;
}
