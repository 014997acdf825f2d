// What a person can do after a run ended: one command line per exit reason.
import type { ExitReason } from "../exit/exit-reasons.js";
import { installHint } from "../agents/install-hints.js";

/** What the next step depends on. */
export interface NextStepInput {
  reason: ExitReason;
  runId: string;
  iterations: number;
  maxIterations: number;
  /** The agent CLI that could not be started, when that is why the run FAILED. */
  agentMissing?: string | undefined;
  /** A `--dry-run`: nothing ran, so going on with it shows nothing new. */
  dryRun?: boolean | undefined;
  /** Why it ended, in words: a BUDGET_EXCEEDED names the budget (src/spend/spend-gate.ts). */
  detail?: string | undefined;
}

/** What to do about a spent budget, by which budget it was. */
function budgetStep(id: string, detail: string): string {
  const period = /budget\.(daily|weekly)/.exec(detail)?.[1];
  if (period)
    return `the ${period} budget is spent: go on once a new ${period === "daily" ? "day" : "week"} begins (UTC), or raise budget.${period}: ralph continue ${id}`;
  const family = /--max-cost \$[0-9.]+ of run (\S+)/.exec(detail)?.[1];
  if (family && family !== id)
    return `its family's budget is spent: raise it on the parent: ralph continue ${family} --max-cost USD`;
  if (detail.includes("--max-tokens")) return `raise the token cap and go on: ralph continue ${id} --max-tokens N`;
  return `raise the budget and go on: ralph continue ${id} --max-cost USD`;
}

/** The next step after a run ended with `reason`, as one line, or null when there is nothing to do. */
export function nextStep(input: NextStepInput): string | null {
  const { reason, runId: id } = input;
  if (input.dryRun && reason !== "FAILED") return nextStep({ ...input, reason: "DRY_RUN", dryRun: false });
  switch (reason) {
    case "DRY_RUN":
      return "that was a dry run: no agent was started; to run it for real, run the same command without --dry-run";
    case "DONE":
      return `review the changes; the whole story: ralph logs ${id}`;
    case "NO_WORK":
      return `every task is done; add tasks to the task list, then ralph continue ${id}`;
    case "STOPPED":
    case "INTERRUPTED":
      return `go on where it stopped: ralph continue ${id}`;
    case "MAX_ITERATIONS":
      return `give it more iterations: ralph continue ${id} -n ${input.iterations + Math.max(input.maxIterations, 1)}`;
    case "BUDGET_EXCEEDED":
      return budgetStep(id, input.detail ?? "");
    case "RUNTIME_EXCEEDED":
      return `allow a longer run and go on: ralph continue ${id} --max-runtime DUR`;
    case "FAILED":
      // An agent that never started left no output: say how to get it instead of pointing at empty logs.
      if (input.agentMissing !== undefined)
        return `${input.agentMissing} is not installed here: ${installHint(input.agentMissing)}`;
      return `see what the agent did: ralph logs ${id} --iteration ${Math.max(input.iterations, 1)}; fix the cause, then ralph continue ${id}`;
    case "STALLED":
      return `see what the agent did: ralph logs ${id} --iteration ${Math.max(input.iterations, 1)}; fix the cause, then ralph continue ${id}`;
    default: {
      const never: never = reason;
      return never;
    }
  }
}
