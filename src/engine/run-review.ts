// Runs the reviewers of one iteration: each a fresh agent process, supervised like the agent (in a --sandbox
// run, inside the sandbox with the work tree read-only), given the task and the run's diff so far, and judged
// by the strict verdict judge. A reviewer that changed the tree gives no verdict that counts.
import { agentEnvironment } from "../agents/env-scrub.js";
import { describeChange } from "../judge/progress-fingerprint.js";
import { judgeReview } from "../judge/review-verdict.js";
import type { Criterion } from "../judge/criteria.js";
import { reviewPrompt, type ReviewPromptParts } from "../run/review-prompt.js";
import { IterationLog } from "../store/iteration-log.js";
import { changedPaths, snapshotTree, treeDiff, type TreeSnapshot } from "../worktree/tree-snapshot.js";
import type { EngineIo } from "./engine-io.js";
import { workDirOf } from "./engine-options.js";
import { failureOf } from "./iteration-facts.js";
import type { ReviewResult } from "./phase.js";
import { startAgent } from "./run-agent.js";
import type { AttemptContext } from "./start-attempt.js";
import { remainingBudgetUsd } from "../control/limit-rules.js";
import { pinBroken, type PinnedProgram } from "../store/pinned-program.js";

/** What a review that started no reviewer process adds to its answer (it is not an agent call). */
const NOT_RUN = { ran: false } as const;

/** The most of the run's diff a reviewer is given in its prompt. */
const DIFF_CAP_BYTES = 200 * 1024;

/** What the reviews of one iteration need from the driver. */
export interface ReviewContext extends Omit<AttemptContext, "onResult"> {
  /** The work tree when the run started and after the iteration (null: no snapshot was taken). */
  trees: { from: TreeSnapshot | null; to: TreeSnapshot | null };
  /** Aborting ends the reviewer under way; the reviews after it are not run. */
  signal: AbortSignal;
  /** The script each reviewer `command` runs, as it was when the run started (by the command's argv as JSON). */
  pins?: ReadonlyMap<string, PinnedProgram | null>;
}

/** Runs each review criterion in turn and returns their answers (never rejects for a reviewer's failure). */
export async function runReviews(
  what: { iteration: number; task: string; criteria: Criterion[] },
  context: ReviewContext,
): Promise<ReviewResult[]> {
  const diff = await runDiff(context);
  // The run started in a repository that git can no longer read (an agent can break .git): the changes cannot be shown, so no reviewer runs.
  if ("unseen" in diff) {
    const reason = `not run: the run's changes cannot be seen (${diff.unseen}), and a review without them does not count`;
    return what.criteria.map((criterion) => ({
      criterion,
      agent: criterion.review?.agent ?? "command",
      verdict: "none",
      reason,
      findings: "",
      costUsd: null,
      tokens: null,
      durationMs: 0,
      ...NOT_RUN,
    }));
  }
  const results: ReviewResult[] = [];
  let spent = context.spentUsd;
  for (const [index, criterion] of what.criteria.entries()) {
    if (context.signal.aborted) break;
    const result = await reviewOnce(
      criterion,
      index + 1,
      { iteration: what.iteration, task: what.task, diff },
      { ...context, spentUsd: spent },
    );
    spent += result.costUsd ?? 0;
    results.push(result);
  }
  return results;
}

/** The run's diff, why there is none (no git from the start), or why it cannot be seen though the run started with git (`unseen`). */
async function runDiff(context: ReviewContext): Promise<ReviewPromptParts["diff"] | { unseen: string }> {
  const { from, to } = context.trees;
  if (from?.ok && !to?.ok) return { unseen: to?.message ?? "no snapshot of the work tree after the iteration" };
  if (!from?.ok || !to?.ok)
    return { missing: from && !from.ok ? from.message : "no snapshot of the work tree when the run started" };
  const diff = await treeDiff(
    workDirOf(context.options),
    context.io.env,
    from.tree,
    to.tree,
    DIFF_CAP_BYTES,
    context.signal,
  );
  if (!diff.ok) return { unseen: diff.message };
  return diff.text.trim() === ""
    ? { missing: "the run changed no file" }
    : { text: diff.text, truncated: diff.truncated };
}

async function reviewOnce(
  criterion: Criterion,
  index: number,
  what: { iteration: number; task: string; diff: ReviewPromptParts["diff"] },
  context: ReviewContext,
): Promise<ReviewResult> {
  const spec = criterion.review;
  const { io, options, record } = context;
  const started = io.now().getTime();
  const base = { criterion, agent: spec?.agent ?? "command", findings: "", costUsd: null, tokens: null } as const;
  const none = (reason: string, extra: Partial<ReviewResult> = {}): ReviewResult => ({
    ...base,
    verdict: "none",
    reason,
    durationMs: io.now().getTime() - started,
    ...extra,
  });
  if (!spec) return none("the criterion names no reviewer", NOT_RUN);
  const workDir = workDirOf(options);
  const sandboxed = io.sandbox !== undefined;
  const remaining = remainingBudgetUsd(options.settings.maxCostUsd, context.spentUsd) ?? undefined;
  // --max-cost is a hard budget: a reviewer is not started once it is spent (the run then ends BUDGET_EXCEEDED).
  if (remaining !== undefined && remaining <= 0)
    return none(`not run: the budget (--max-cost $${options.settings.maxCostUsd ?? 0}) is spent`, NOT_RUN);
  // So are the family's, the project's and the user's budgets, as the spend ledger sums them.
  const budget = io.spend?.check(io.now().getTime()) ?? null;
  if (budget) return none(`not run: ${budget.detail}`, NOT_RUN);
  // The person's reviewer script, rewritten since the run started (by the agent, say), gives no verdict.
  const broken = spec.command ? pinBroken(context.pins?.get(JSON.stringify(spec.command)) ?? null) : null;
  if (broken !== null)
    return none(`not run: the reviewer's script ${broken}; ralph runs only the script as it was then`, NOT_RUN);
  const adapter = io.adapterFor(spec.agent);
  let invocation;
  let prompt;
  let cwd;
  try {
    // A CLI that reads settings from the directory it starts in starts outside the tree the agent wrote.
    cwd = adapter.untrustedCwd?.({ cwd: workDir, env: io.env }) ?? workDir;
    prompt = reviewPrompt({
      task: what.task,
      diff: what.diff,
      instructions: spec.prompt,
      iteration: what.iteration,
      sandboxed,
      ...(cwd !== workDir ? { treeDir: workDir } : {}),
    });
    invocation = adapter.invocation({
      prompt,
      cwd: workDir,
      env: io.env,
      scratchDir: record.paths.dir,
      untrustedTree: true,
      ...(spec.model ? { model: spec.model } : {}),
      ...(remaining !== undefined ? { remainingBudgetUsd: remaining } : {}),
      ...(spec.command ? { commandArgv: spec.command } : {}),
    });
  } catch (error) {
    return none(`the reviewer cannot be started: ${(error as Error).message}`, NOT_RUN);
  }
  let log: IterationLog;
  try {
    log = new IterationLog(record.paths.reviewLog(what.iteration, index), record.redactor, record.guard);
  } catch (error) {
    return none(`the review's log cannot be opened: ${(error as Error).message}`, NOT_RUN);
  }
  const before = await io.fingerprint(workDir, io.env, context.tasksFile ?? undefined, context.signal);
  const handle = startAgent({
    adapter,
    invocation,
    prompt,
    cwd,
    env: agentEnvironment(io.env, {
      ...invocation.env,
      RALPH_RUN_ID: options.runId,
      RALPH_RUN_DIR: record.paths.dir,
      RALPH_ITERATION: String(what.iteration),
      RALPH_REVIEW: "1",
    }),
    marker: context.marker,
    log,
    timeoutMs: spec.timeoutMs,
    idleTimeoutMs: null,
    lingerMs: options.settings.lingerMs,
    graceMs: options.settings.graceMs,
    urgent: io.signals.urgent,
    onEvent: () => undefined,
    spawnAgent: (options) => (io.spawnReviewer ? io.spawnReviewer(options, spec.agent) : io.spawnAgent(options)),
    now: () => io.now().getTime(),
  });
  const onAbort = (): void => handle.end("interrupted");
  if (context.signal.aborted) onAbort();
  context.signal.addEventListener("abort", onAbort, { once: true });
  const run = await handle.done.finally(() => context.signal.removeEventListener("abort", onAbort));
  if (run.kind === "missing") return none(`the reviewer could not be started: ${run.message}`, NOT_RUN);
  const model = run.outcome.model ?? spec.model ?? null;
  const call = io.spend?.record({
    role: "review",
    iteration: what.iteration,
    agent: spec.agent,
    model,
    costUsd: run.outcome.costUsd,
    tokens: run.outcome.tokens,
    durationMs: run.durationMs,
    at: io.now(),
  });
  // The review counts the cost the ledger holds: the CLI's, else an estimate from its tokens.
  const spend = {
    costUsd: call ? call.cost_usd : (run.outcome.costUsd ?? null),
    tokens: run.outcome.tokens ?? null,
    durationMs: run.durationMs,
  };
  const changed = await treeChange(before, context, workDir);
  if (typeof changed === "string")
    return none(changed, { ...spend, findings: judgeReview(run.outcome.finalMessage ?? "", prompt).findings });
  const failure = run.endedBy === "interrupted" ? "it was ended: the run is stopping" : failureOf(run);
  if (failure) return none(`the reviewer failed: ${failure}`, { ...spend, ...changed });
  const verdict = judgeReview(run.outcome.finalMessage ?? "", prompt);
  // The reviewer saw only part of the change: its approval does not cover the rest, so it is no approval.
  if (verdict.verdict === "approve" && "text" in what.diff && what.diff.truncated) {
    const reason = `the run's diff is too large to show whole (over ${DIFF_CAP_BYTES / 1024} KiB); an approval of part of it does not count`;
    return { ...base, ...spend, ...changed, verdict: "none", reason, findings: verdict.findings };
  }
  return verdict.verdict === "none"
    ? { ...base, ...spend, ...changed, verdict: "none", reason: verdict.reason, findings: verdict.findings }
    : { ...base, ...spend, ...changed, verdict: verdict.verdict, reason: null, findings: verdict.findings };
}

/** Why the reviewer's verdict does not count because it changed the tree (a string), else a note for the run (or nothing). */
async function treeChange(
  before: Awaited<ReturnType<EngineIo["fingerprint"]>>,
  context: ReviewContext,
  workDir: string,
): Promise<string | { note?: string }> {
  const { io } = context;
  const after = await io.fingerprint(workDir, io.env, context.tasksFile ?? undefined, context.signal);
  if (!before.ok || !after.ok) {
    if (io.sandbox !== undefined) return {};
    const why = !before.ok ? before.message : !after.ok ? after.message : "";
    return {
      note: `ralph cannot see whether a reviewer changes the work tree here (${why}); in a --sandbox run the tree is read-only for it`,
    };
  }
  const change = describeChange(before, after);
  if (change === null) return {};
  const to = context.trees.to;
  const now = to?.ok ? await snapshotTree(workDir, io.env, context.signal) : null;
  const paths = to?.ok && now?.ok ? await changedPaths(workDir, io.env, to.tree, now.tree) : null;
  const named = paths && paths.length > 0 ? `: ${paths.join(", ")}` : "";
  return `the reviewer changed the work tree (${change}${named}), which a review must not do; its verdict does not count`;
}
