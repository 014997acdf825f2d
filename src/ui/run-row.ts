// One row of the dashboard's runs table: a run's summary plus what the table shows beyond `ralph list`.
import type { RunnerAlive } from "../control/lock-file.js";
import { summariseRun } from "../control/list-runs.js";
import type { RunSummary } from "../store/run-summary.js";
import type { Project } from "./projects.js";

/** A run as the table shows it. */
export interface RunRow extends RunSummary {
  project: string;
  tokens: number;
  reason: string | null;
  branch: string | null;
  /** The task the run works on now (status.json `current_task`), shown by the terminal UI. */
  task: string | null;
}

/** The text of a field when status.json carries it as a non-empty string. */
function text(value: unknown): string | null {
  return typeof value === "string" && value.length > 0 ? value : null;
}

/** The row of run `id` of `project`. */
export function readRunRow(project: Project, id: string, alive: RunnerAlive, now: Date): RunRow {
  const { summary, status } = summariseRun(project.dir, id, alive, now);
  // Fields a later version of the runner may write: shown when present, never required.
  const extra = (status ?? {}) as unknown as Record<string, unknown>;
  return {
    ...summary,
    project: project.key,
    tokens: (status?.tokens?.input ?? 0) + (status?.tokens?.output ?? 0),
    reason: text(status?.last_action),
    branch: text(extra.branch),
    task: text(status?.current_task),
  };
}
