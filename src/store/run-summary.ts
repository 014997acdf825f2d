// The shape of a run as `ralph list` and `ralph status` report it (their --json output is validated against these).
import { z } from "zod";
import { EXIT_REASONS } from "../exit/exit-reasons.js";

/**
 * Every state a listed run can be in: live states, `stale` (runner gone, no marker), `foreign` (a run
 * directory ralph has no record of creating: never picked, never continued), or its exit reason.
 */
const LISTED_STATES = ["running", "paused", "waiting", "needs_human", "stale", "foreign", ...EXIT_REASONS] as const;

/** Tokens by kind as every JSON view gives them. */
export const tokenFigures = z.object({
  input: z.number().int().nonnegative(),
  output: z.number().int().nonnegative(),
  cache_read: z.number().int().nonnegative(),
  cache_write: z.number().int().nonnegative(),
  total: z.number().int().nonnegative(),
});

/** One run in `ralph list --json`. */
export const runSummarySchema = z.object({
  id: z.string(),
  state: z.enum(LISTED_STATES),
  active: z.boolean(),
  mode: z.enum(["run", "hook"]).nullable(),
  agent: z.string().nullable(),
  iteration: z.number().int().nonnegative(),
  max_iterations: z.number().int().nonnegative().nullable(),
  /** What the run spent, from ralph's spend ledger (null: no cost known); a --parallel parent's includes its children. */
  cost_usd: z.number().nonnegative().nullable(),
  cost_source: z.enum(["reported", "computed", "mixed", "none"]),
  /** Tokens by kind, from the spend ledger; `total` is every kind together (input, output, cache read, cache write). */
  tokens: tokenFigures,
  calls: z.number().int().nonnegative(),
  started_at: z.string().nullable(),
  updated_at: z.string().nullable(),
  ended_at: z.string().nullable(),
  age_seconds: z.number().nonnegative().nullable(),
  pid: z.number().int().nullable(),
  /** `--worktree`: the branch the run works on (`ralph/<id>`), else null. */
  branch: z.string().nullable(),
  /** A child run of `--parallel`: its parent run's id, else null. */
  parent: z.string().nullable(),
  /** The agent's open question (`<ask>`): the run waits for `ralph answer`; null when none is open. */
  question: z.string().nullable(),
  /** `--dry-run`: the agent was never started. */
  dry_run: z.boolean(),
});

/** `ralph list --json`. */
export const runListSchema = z.object({ schema_version: z.literal(1), runs: z.array(runSummarySchema) });

/** `ralph status --json`. */
export const runStatusReportSchema = runSummarySchema.extend({
  schema_version: z.literal(1),
  run_dir: z.string(),
  session_id: z.string().nullable(),
  current_task: z.string().nullable(),
  elapsed_seconds: z.number().nonnegative().nullable(),
  exit_reason: z.enum(EXIT_REASONS).nullable(),
  exit_code: z.number().int().nullable(),
  last_action: z.string().nullable(),
  resume_at: z.string().nullable(),
  /** How agent trees are kept (SPEC section 9); null for runs recorded before it was. */
  supervision: z.enum(["cgroup", "subreaper", "tree"]).nullable(),
  /** What the last iteration's agent tree used, where a cgroup counted it. */
  resources: z
    .object({
      cpu_seconds: z.number().nonnegative().nullable(),
      peak_memory_bytes: z.number().int().nonnegative().nullable(),
      peak_pids: z.number().int().nonnegative().nullable(),
      oom_kills: z.number().int().nonnegative(),
    })
    .nullable(),
  /** `--worktree`: the run's worktree directory, else null. */
  worktree: z.string().nullable(),
  /** The last review (`type: review` criterion): the iteration it judged, its verdict, why it did not approve or its first finding. */
  review: z
    .object({
      iteration: z.number().int().nonnegative(),
      verdict: z.enum(["approve", "changes", "none"]),
      detail: z.string(),
    })
    .nullable(),
  /** A `--parallel` parent's child runs, oldest first; empty for any other run. */
  children: z.array(
    runSummarySchema.pick({ id: true, state: true, iteration: true, cost_usd: true, cost_source: true, branch: true }),
  ),
  recent_events: z.array(z.record(z.string(), z.unknown())),
});

/** One listed run. */
export type RunSummary = z.infer<typeof runSummarySchema>;
/** The status report of one run. */
export type RunStatusReport = z.infer<typeof runStatusReportSchema>;
