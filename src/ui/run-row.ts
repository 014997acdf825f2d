// One row of the dashboard's runs table: a run's summary plus what the table shows beyond `ralph list`.
import type { RunnerAlive } from "../control/lock-file.js";
import { summariseRun } from "../control/list-runs.js";
import type { RunSummary } from "../store/run-summary.js";
import type { Project } from "./projects.js";
import { costCell, costText, tokensCell, tokensText, type SpendTotals } from "../spend/spend-totals.js";

/** A run as the table shows it. */
export interface RunRow extends RunSummary {
  project: string;
  /** The spend and tokens as the CLI words them (src/spend/spend-totals.ts): the page shows these strings, never its own. */
  spend_text: { cost: string; cost_cell: string; tokens: string; tokens_cell: string };
  reason: string | null;
  branch: string | null;
  /** A `--parallel` parent: how many children it keeps going at once (its iteration counts child runs); else null. */
  parallel: number | null;
  /** The task the run works on now (status.json `current_task`), shown by the terminal UI. */
  task: string | null;
}

/** The text of a field when status.json carries it as a non-empty string. */
function text(value: unknown): string | null {
  return typeof value === "string" && value.length > 0 ? value : null;
}

/** The row of run `id` of `project`; `spend`: the spend of many runs read at once (spendLister), when reading many. */
export function readRunRow(
  project: Project,
  id: string,
  alive: RunnerAlive,
  now: Date,
  spend?: (id: string) => SpendTotals,
): RunRow {
  const { summary, status } = summariseRun(project.dir, id, alive, now, undefined, undefined, spend);
  // Fields a later version of the runner may write: shown when present, never required.
  const extra = (status ?? {}) as unknown as Record<string, unknown>;
  return {
    ...summary,
    project: project.key,
    spend_text: {
      cost: costText(summary),
      cost_cell: costCell(summary),
      tokens: tokensText(summary.tokens),
      tokens_cell: tokensCell(summary.tokens),
    },
    reason: text(status?.last_action),
    branch: text(extra.branch),
    parallel: typeof extra.parallel === "number" && extra.parallel > 0 ? extra.parallel : null,
    task: text(status?.current_task),
  };
}
