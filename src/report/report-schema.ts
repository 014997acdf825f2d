// `ralph report RUN --format json`: what a reviewer needs to judge a run, as a zod schema (schemas/report.schema.json).
import { z } from "zod";

const int = z.number().int();

const costSource = z
  .enum(["reported", "computed", "mixed", "none"])
  .describe(
    "reported: by the agent CLI; computed: estimated by ralph from tokens and its dated price table; mixed: both; none: no cost known",
  );

const check = z.object({ criterion: z.string(), check: z.string(), passed: z.boolean(), detail: z.string() });

const iteration = z.object({
  iteration: int,
  result: z.string().nullable().describe("done, continue, failed, … (null: it never ended)"),
  agent: z.string().nullable(),
  task: z.string().nullable(),
  duration_ms: z.number().nullable(),
  cost_usd: z.number().nullable(),
  checks: z.array(check).describe("completion checks run after it (review criteria excluded)"),
  reviews: z.array(check).describe("review verdicts (criterion type review), when the run has them"),
  commit: z.string().nullable().describe("the commit made on the run's branch, if any"),
  planted: z
    .array(z.string())
    .describe("what the sandboxed agent planted that git would run later (sandbox_tamper), moved out of the work tree"),
});

const child = z.object({
  run: z.string(),
  task: z.string(),
  branch: z.string(),
  outcome: z.string().describe("the child's exit reason, or NOT_STARTED / running"),
  detail: z.string(),
  cost_usd: z.number().nullable().describe("what it spent, from ralph's spend ledger (null: no cost known)"),
  cost_source: costSource,
  merge: z
    .enum(["merged", "abandoned", "pending"])
    .nullable()
    .describe("what the parent did with its branch: null when it did not end DONE"),
  merge_detail: z.string().nullable().describe("the merge commit, or why the merge was abandoned"),
  resolves: int.describe("resolve iterations its merge took"),
  iterations: z.array(iteration),
});

/** The report of one run. */
export const runReportSchema = z.object({
  schema_version: z.literal(1),
  run: z.string(),
  outcome: z.string().nullable().describe("exit reason (null: still running or killed before recording it)"),
  exit_code: int.nullable(),
  foreign: z
    .string()
    .optional()
    .describe(
      "set when ralph has no record of starting the run: why, and what to do (its files then say what they say, unvouched for)",
    ),
  reason: z.string().describe("why it ended (the run_ended detail), or what it is doing"),
  agent: z.string(),
  started_at: z.string(),
  ended_at: z.string().nullable(),
  cost_usd: z
    .number()
    .nullable()
    .describe("what it spent (a --parallel parent: with its children), from ralph's spend ledger; null: no cost known"),
  cost_source: costSource,
  calls: int.describe("agent calls (iterations and reviewers)"),
  tokens: z
    .object({
      input: int,
      output: int,
      cache_read: int,
      cache_write: int,
      total: int.describe("every kind together: input, output, cache read and cache write"),
    })
    .describe("tokens by kind, from ralph's spend ledger; input excludes the cached input"),
  branch: z.string().nullable().describe("the run's branch (a --parallel parent: its integration branch)"),
  base: z.string().nullable().describe("the commit the branch started from"),
  base_branch: z.string().nullable().describe("the branch checked out when the run started"),
  diffstat: z
    .object({
      files_changed: int,
      insertions: int,
      deletions: int,
      text: z.string().describe("git diff --stat of base..branch"),
    })
    .nullable(),
  iterations: z.array(iteration),
  children: z.array(child),
  open_questions: z.array(z.object({ run: z.string(), question: z.string() })),
});

/** A run's report. */
export type RunReport = z.infer<typeof runReportSchema>;
/** One iteration in a report. */
export type ReportIteration = z.infer<typeof iteration>;
