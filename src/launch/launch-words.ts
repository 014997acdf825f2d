// What the launch layer shows a person, given to it by cli/ (the one place that words things): the run's live
// view, its first and last lines, and how a failure is said with its exit code.
import type { RunResult } from "../run/finish-run.js";
import type { RecordListener } from "../run/run-record.js";
import type { WorktreeFailure } from "../worktree/worktree-failure.js";
import type { StartRunInput } from "./start-run-input.js";
import type { SpendTotals } from "../spend/spend-totals.js";

/** A listener that shows a run's events as they come; closed once the run has ended. */
export interface RunView extends RecordListener {
  close(): void;
  /** Whether the agent reported a cost at all. */
  readonly costReported: boolean;
}

/** Where a run's view writes to. */
export type Out = NodeJS.WritableStream;

export interface LaunchWords {
  view(input: StartRunInput, out: Out): RunView;
  /** The lines before the first iteration. */
  startLines(input: StartRunInput, worktree: { path: string; branch: string } | null): string[];
  /** The closing lines once the run has ended; `spend` is the spend ledger's sum for the run; `refused` are the sandbox's lines on what it refused the agent. */
  endLines(
    input: StartRunInput,
    result: RunResult,
    view: RunView,
    worktree: { path: string; branch: string } | null,
    spend: SpendTotals,
    refused: string[],
  ): string[];
  /** A failure as one line (without the `ralph: ` prefix) and its exit code. */
  failure(error: unknown): { code: number; line: string };
  /** A worktree failure as the run's log says it. */
  worktreeFailure(failure: WorktreeFailure): string;
}
