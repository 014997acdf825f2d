// Why a run could not be launched, as a value: the launch layer finds it, cli/ alone words it and maps it to an
// exit code (cli/failure-exit.ts). Every launch failure is bad input: the run was refused before it started.
import type { AgentName } from "../agents/types.js";
import type { WorktreeFailure } from "../worktree/worktree-failure.js";

/** What the preflight found missing before iteration 1 (nothing has been created yet). */
export type PreflightProblem =
  | { kind: "agent-missing"; agent: AgentName; program: string }
  | { kind: "not-writable"; dir: string }
  | { kind: "reviewer-missing"; check: string; agent: AgentName; program: string }
  | { kind: "check-missing"; check: string; program: string };

/** Why a run's directory or locks could not be had. */
export type OpeningProblem =
  | { kind: "not-writable"; what: string; code: string }
  | { kind: "run-exists"; runId: string }
  /** Another run holds the project (its id and runner's pid as far as known). */
  | { kind: "project-busy"; runId: string | null; pid: number | null }
  /** Another runner drives this very run. */
  | { kind: "run-driven"; runId: string; pid: number | null };

/** What stopped a launch. */
export type LaunchProblem =
  /** A flag, file or cap that cannot work here, said as the check that found it says it. */
  | { kind: "refused"; message: string }
  /** The work place could not be made or found again: the flag that asked for it and git's failure. */
  | { kind: "worktree"; flag: string; failure: WorktreeFailure }
  | { kind: "preflight"; problem: PreflightProblem }
  | { kind: "opening"; problem: OpeningProblem };

/** Thrown by the launch layer before a run starts; nothing it made is left behind. */
export class LaunchFailure extends Error {
  override readonly name = "LaunchFailure";
  constructor(readonly problem: LaunchProblem) {
    super(
      problem.kind === "refused"
        ? problem.message
        : problem.kind === "worktree"
          ? `${problem.flag}: ${problem.failure.kind}`
          : `${problem.kind}: ${problem.problem.kind}`,
    );
  }
}

/** A launch refused for bad input. */
export function refused(message: string): LaunchFailure {
  return new LaunchFailure({ kind: "refused", message });
}
