// events.jsonl: the run's typed event stream, one JSON object per line, appended only.
import { appendWhole } from "./append-whole.js";
import type { ExitReason } from "../exit/exit-reasons.js";
import type { ResourceFigures } from "../process/agent-cgroup.js";

/** Token counts as an event reports them. */
export interface EventTokens {
  input: number;
  output: number;
  cacheRead?: number;
  cacheWrite?: number;
}

/** What an iteration came to. */
export type IterationResult =
  | "done"
  | "continue"
  | "failed"
  | "timeout"
  | "usage_limit"
  | "interrupted"
  | "stopped"
  | "max_iterations"
  | "paused"
  | "asked";

/** The body of each event type: what the engine and the in-session hook publish. */
export type EventBody =
  | {
      type: "run_started";
      agent: string;
      mode?: "hook";
      max_iterations: number;
      cwd: string;
      continued_from_iteration?: number | null;
      session_id?: string | null;
      supervision?: string;
      branch?: string;
      worktree?: string;
      parent?: string;
      /** A `--parallel` parent: how many child runs it keeps going at once. */
      parallel?: number;
      /** The commit the run's branch started from, and the branch checked out there then (null: detached). */
      base?: string;
      base_branch?: string | null;
    }
  | { type: "iteration_started"; iteration: number; max_iterations?: number; task: string | null; agent?: string }
  | { type: "agent_event"; iteration: number; kind: string; text?: string; tool?: string; sessionId?: string }
  | {
      type: "iteration_ended";
      iteration: number;
      result: IterationResult;
      agent?: string;
      exit_code?: number | null;
      exit_signal?: string | null;
      ended_by?: string | null;
      duration_ms?: number;
      error?: string | null;
      counted?: false;
      cost_usd?: number | null;
      /** Where cost_usd comes from: the agent CLI's report, or ralph's price table (an estimate from tokens). */
      cost_source?: "reported" | "computed" | "unknown";
      cost_total_usd?: number;
      tokens?: EventTokens | null;
      session_id?: string | null;
      promise?: string | null;
      promise_ignored?: string;
      checks_skipped?: string;
      stderr_tail?: string[];
      criteria_passed?: boolean | null;
      resources?: ResourceFigures | null;
      commit?: string | null;
      commit_files?: number;
      commit_error?: string;
      message_source?: string;
      stop_hook_active?: boolean;
      blocks_this_turn?: number;
    }
  | { type: "paused" }
  | { type: "needs_human"; iteration: number; question: string }
  /** `answer` is null for an in-session loop, where the person answers in the Claude Code session itself. */
  | { type: "answered"; iteration: number; question: string; answer: string | null }
  | { type: "resumed" }
  /** `budget`: a spent daily or weekly budget is waited out (budget.on_exhausted: wait), not a provider's limit. */
  | {
      type: "waiting_limit";
      iteration: number;
      message: string;
      reset_at: string | null;
      resume_at: string;
      budget?: true;
    }
  | { type: "state_change_rejected"; iteration: number; ignored: string[]; applied: string[]; kept_as: string }
  | { type: "state_set"; applied?: string; refused?: string }
  | { type: "control_refused"; iteration: number; file: string; reason: string }
  | { type: "criteria_checked"; iteration: number; criterion: string; check: string; passed: boolean; detail: string }
  /** A guard ended the run (no progress, the same failure again, a billing error); `detail` says why. */
  | { type: "guard_fired"; guard: "stalled" | "same_failure" | "billing"; detail: string }
  /**
   * A reviewer (`type: review` criterion) judged an iteration: `none` when its answer held no verdict that
   * counts (`reason` says why: no tag, a crash, a timeout, a changed tree); `findings` go into the next prompt.
   */
  | {
      type: "review_verdict";
      iteration: number;
      reviewer: string;
      agent: string;
      verdict: "approve" | "changes" | "none";
      reason: string | null;
      findings: string;
      cost_usd: number | null;
      duration_ms: number;
    }
  /** Tasks the agent marked done, marked open again because the checks did not pass on that tree. */
  | { type: "tasks_reopened"; iteration: number; tasks: string[]; reason: string }
  | { type: "agent_lingered"; iteration: number; agent: string; linger_ms: number }
  | { type: "sandbox_denied"; iteration: number; host: string; port: number }
  | { type: "sandbox_tamper"; iteration: number; paths: string[] }
  | { type: "notification_failed"; target: string; event: string; error: string; attempts: number }
  | {
      type: "run_ended";
      reason: ExitReason;
      exit_code: number;
      detail: string;
      /** What the run spent, from the spend ledger (a --parallel parent: with its children), as status --json gives it. */
      spend?: {
        cost_usd: number | null;
        cost_source: "reported" | "computed" | "mixed" | "none";
        calls: number;
        tokens: { input: number; output: number; cache_read: number; cache_write: number; total: number };
      };
    }
  | { type: "child_started"; child: string; task: string; branch: string }
  | {
      type: "child_ended";
      child: string;
      task: string;
      reason: ExitReason | "NOT_STARTED";
      exit_code: number | null;
      detail: string;
      cost_usd: number;
    }
  /** A `--parallel` parent merged a DONE child's branch into its integration branch (after `resolves` resolve iterations). */
  | { type: "child_merged"; child: string; task: string; commit: string; resolves: number }
  /** The merge could not be made: it was undone and the task reopened. */
  | { type: "merge_abandoned"; child: string; task: string; reason: string; resolves: number }
  /** A resolve iteration (run `child`) on the integration worktree, for the merge of `for_child`. */
  | {
      type: "resolve_started";
      child: string;
      for_child: string;
      task: string;
      attempt: number;
      conflicts: string[];
      checks_failed: boolean;
    }
  | { type: "resolve_ended"; child: string; for_child: string; reason: ExitReason | "NOT_STARTED"; cost_usd: number };

/** Event types of the stream. */
export type EventType = EventBody["type"];

/** The fields every event starts with. */
export interface EventEnvelope {
  v: 1;
  ts: string;
  run: string;
}

/**
 * One event as written to events.jsonl and to stdout with --json: the envelope and one EventBody. Readers
 * of the stream (the renderer, the dashboard) take it as it is on disk, a record of named fields.
 */
export interface RunEvent extends EventEnvelope {
  type: EventType;
  [field: string]: unknown;
}

/** Appends one whole event line (never a torn one) to a file path, or to a descriptor opened for appending. */
export function appendEvent(file: string | number, event: RunEvent): void {
  appendWhole(file, `${JSON.stringify(event)}\n`);
}
