// The event payload (a line of events.jsonl, as notifications carry it) as a zod schema, one member per event type.
// The compile-time check at the bottom keeps each member equal to the engine's EventBody of that type.
import { z } from "zod";
import { EXIT_REASONS } from "../exit/exit-reasons.js";
import type { EventBody, EventType } from "../store/event-log.js";

const envelope = {
  v: z.literal(1).describe("envelope version"),
  ts: z.string().describe("ISO 8601 time the event was recorded"),
  run: z.string().describe("run id"),
};

const int = z.number().int();
const tokens = z.object({ input: int, output: int, cacheRead: int.optional(), cacheWrite: int.optional() });
const resources = z.object({
  cpu_seconds: z.number().nullable(),
  peak_memory_bytes: z.number().nullable(),
  peak_pids: int.nullable(),
  oom_kills: int,
});
const ITERATION_RESULTS = [
  "done",
  "continue",
  "failed",
  "timeout",
  "usage_limit",
  "interrupted",
  "stopped",
  "max_iterations",
  "paused",
  "asked",
] as const;

/** The fields of each event type beyond the envelope and `type`. */
const BODIES = {
  run_started: {
    agent: z.string(),
    mode: z.literal("hook").optional().describe("set for in-session (Claude Code hook) loops"),
    max_iterations: int,
    cwd: z.string(),
    continued_from_iteration: int.nullable().optional(),
    session_id: z.string().nullable().optional(),
    supervision: z.string().optional().describe("cgroup, subreaper or tree"),
    branch: z.string().optional().describe("with --worktree: the run's branch"),
    worktree: z.string().optional(),
    parent: z.string().optional().describe("the --parallel run that started this one"),
    parallel: int.optional().describe("a --parallel parent: child runs at once"),
    base: z.string().optional().describe("the commit the run's branch started from"),
    base_branch: z
      .string()
      .nullable()
      .optional()
      .describe("the branch checked out when the run started (null: detached HEAD)"),
  },
  iteration_started: {
    iteration: int,
    max_iterations: int.optional(),
    task: z.string().nullable(),
    agent: z.string().optional().describe("the agent running this iteration (a fallback after a usage limit)"),
  },
  agent_event: {
    iteration: int,
    kind: z.string(),
    text: z.string().optional(),
    tool: z.string().optional(),
    sessionId: z.string().optional(),
  },
  iteration_ended: {
    iteration: int,
    result: z.enum(ITERATION_RESULTS),
    agent: z.string().optional(),
    exit_code: int.nullable().optional(),
    exit_signal: z.string().nullable().optional(),
    ended_by: z
      .string()
      .nullable()
      .optional()
      .describe("why ralph ended the agent: timeout, idle_timeout, lingered, interrupted, stop_now, …"),
    duration_ms: z.number().optional(),
    error: z.string().nullable().optional(),
    counted: z.literal(false).optional().describe("false for a usage limit: the iteration is run again"),
    cost_usd: z.number().nullable().optional(),
    cost_source: z
      .enum(["reported", "computed", "unknown"])
      .optional()
      .describe(
        "where cost_usd comes from: the agent CLI (reported) or ralph's dated price table (computed, an estimate)",
      ),
    cost_total_usd: z.number().optional(),
    tokens: tokens.nullable().optional(),
    session_id: z.string().nullable().optional(),
    promise: z.string().nullable().optional(),
    promise_ignored: z.string().optional(),
    checks_skipped: z.string().optional(),
    stderr_tail: z
      .array(z.string())
      .optional()
      .describe("a failed iteration: the last lines the agent wrote to stderr"),
    criteria_passed: z.boolean().nullable().optional(),
    resources: resources.nullable().optional(),
    message_source: z.string().optional(),
    stop_hook_active: z.boolean().optional(),
    blocks_this_turn: int.optional(),
    commit: z.string().nullable().optional().describe("with --commit iteration: the commit made, or null"),
    commit_files: int.optional(),
    commit_error: z.string().optional(),
  },
  paused: {},
  resumed: {},
  waiting_limit: {
    iteration: int,
    message: z.string(),
    reset_at: z.string().nullable().describe("when the provider said the limit resets, if it did"),
    resume_at: z.string().describe("when the run tries again"),
    budget: z
      .literal(true)
      .optional()
      .describe(
        "true when a spent daily or weekly budget is waited out (budget.on_exhausted: wait), not a provider's usage limit",
      ),
  },
  state_change_rejected: {
    iteration: int,
    ignored: z.array(z.string()),
    applied: z.array(z.string()),
    kept_as: z.string(),
  },
  state_set: { applied: z.string().optional(), refused: z.string().optional() },
  control_refused: {
    iteration: int.describe("the iteration whose agent was running when the file was written"),
    file: z.string().describe("the control file not taken: ANSWER or a set request"),
    reason: z.string(),
  },
  criteria_checked: {
    iteration: int,
    criterion: z.string(),
    check: z.string(),
    passed: z.boolean(),
    detail: z.string(),
  },
  guard_fired: {
    guard: z
      .enum(["stalled", "same_failure", "billing"])
      .describe("which guard: no progress, the same failure again, a billing error"),
    detail: z.string().describe("the run's ending, naming what fired it"),
  },
  review_verdict: {
    iteration: int,
    reviewer: z.string().describe("the review criterion's label (its agent, model or command)"),
    agent: z.string(),
    verdict: z.enum(["approve", "changes", "none"]).describe("none: no verdict that counts, which is not an approval"),
    reason: z
      .string()
      .nullable()
      .describe("why the answer is no verdict (no tag, a crash, a timeout, a changed tree), else null"),
    findings: z
      .string()
      .describe("the reviewer's findings (its answer before the verdict tag), as the next prompt carries them"),
    cost_usd: z.number().nullable(),
    duration_ms: z.number(),
  },
  tasks_reopened: {
    iteration: int,
    tasks: z.array(z.string()).describe("ids of the tasks the agent marked done that were marked open again"),
    reason: z.string().describe("why the marks did not count (a check failed, or the iteration failed)"),
  },
  agent_lingered: { iteration: int, agent: z.string(), linger_ms: int.describe("the --linger in force") },
  sandbox_denied: {
    iteration: int,
    host: z.string().describe("the host the sandboxed agent tried to reach"),
    port: int,
  },
  sandbox_tamper: {
    iteration: int,
    paths: z
      .array(z.string())
      .describe(
        "what the sandboxed agent planted that git would run or follow later (a nested repository, a gitlink, .git/commondir), moved out of the work tree",
      ),
  },
  notification_failed: {
    target: z.string().describe("the target with URL secrets redacted"),
    event: z.string().describe("type of the event that was not delivered"),
    error: z.string(),
    attempts: int,
  },
  run_ended: {
    reason: z.enum(EXIT_REASONS).describe("exit reason (a STALLED ending also matches the `stalled` filter)"),
    exit_code: int,
    detail: z.string(),
    spend: z
      .object({
        cost_usd: z.number().nullable(),
        cost_source: z.enum(["reported", "computed", "mixed", "none"]),
        calls: int,
        tokens: z.object({
          input: int,
          output: int,
          cache_read: int,
          cache_write: int,
          total: int.describe("every kind together"),
        }),
      })
      .optional()
      .describe("what the run spent, from ralph's spend ledger (a --parallel parent: with its children)"),
  },
  needs_human: { iteration: int, question: z.string().describe("the agent's <ask> text") },
  answered: {
    iteration: int,
    question: z.string(),
    answer: z.string().nullable().describe("null for an in-session loop, answered in the Claude Code session"),
  },
  child_started: { child: z.string().describe("the child run's id"), task: z.string(), branch: z.string() },
  child_ended: {
    child: z.string(),
    task: z.string(),
    reason: z.enum([...EXIT_REASONS, "NOT_STARTED"]),
    exit_code: int.nullable(),
    detail: z.string(),
    cost_usd: z.number(),
  },
  child_merged: {
    child: z.string(),
    task: z.string(),
    commit: z.string().describe("the merge commit on the integration branch"),
    resolves: int,
  },
  merge_abandoned: { child: z.string(), task: z.string(), reason: z.string(), resolves: int },
  resolve_started: {
    child: z.string().describe("the resolve run's id"),
    for_child: z.string().describe("the child whose merge it resolves"),
    task: z.string(),
    attempt: int,
    conflicts: z.array(z.string()),
    checks_failed: z.boolean(),
  },
  resolve_ended: {
    child: z.string(),
    for_child: z.string(),
    reason: z.enum([...EXIT_REASONS, "NOT_STARTED"]),
    cost_usd: z.number(),
  },
};

function member<T extends string, S extends z.ZodRawShape>(type: T, shape: S) {
  // Loose: a reader must accept fields a later ralph adds.
  return z.looseObject({ ...envelope, type: z.literal(type), ...shape });
}

const members = Object.entries(BODIES).map(([type, shape]) => member(type, shape));

/** One event of the stream as a notification command reads it on stdin and a json webhook receives it. */
export const runEventSchema = z.discriminatedUnion(
  "type",
  members as unknown as [ReturnType<typeof member>, ...Array<ReturnType<typeof member>>],
);

/** An event as the schema describes it. */
export type RunEventEnvelope = z.infer<typeof runEventSchema>;

// --- The schema follows the engine: same event types, same fields, same types (checked by the compiler). ---
type Body<T extends EventType> = Omit<Extract<EventBody, { type: T }>, "type">;
type Described<T extends EventType> = z.output<z.ZodObject<(typeof BODIES)[T]>>;
type Both<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Same<T extends EventType> =
  Both<keyof Body<T>, keyof (typeof BODIES)[T]> extends true ? Both<Body<T>, Described<T>> : false;
type Mismatched = { [T in EventType]: Same<T> extends true ? never : T }[EventType];
/** Fails to compile, naming the event types, when an EventBody and its schema member differ. */
const bodiesMatch: [Mismatched] extends [never] ? true : Mismatched = true;
void bodiesMatch;
