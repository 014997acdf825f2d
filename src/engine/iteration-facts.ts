// Pure facts about one finished agent run: whether it failed, what it spent, and how it is reported.
import type { AgentOutcome, LimitInfo } from "../agents/types.js";
import { isBillingFailure } from "../agents/limit-detect.js";
import type { ClaimVerdict } from "../judge/claim.js";
import type { CriterionVerdict } from "../judge/criteria.js";
import type { IterationReport } from "../run/iteration-record.js";
import type { IterationResult } from "../store/event-log.js";
import type { Attempt, FinishedRun, Tally } from "./phase.js";

/** The counters a run starts with; a continued run keeps its iteration, calls, spend and session. */
export function newTally(
  previous: Partial<
    Pick<Tally, "iteration" | "calls" | "costUsd" | "sessionId" | "question" | "answer" | "review" | "reviewBase">
  > & { tokens?: Parameters<typeof allKinds>[0] },
  startedAtMs: number,
): Tally {
  return {
    iteration: previous.iteration ?? 0,
    calls: previous.calls ?? 0,
    costUsd: previous.costUsd ?? 0,
    tokens: allKinds(previous.tokens),
    sessionId: previous.sessionId ?? null,
    failures: 0,
    stalled: 0,
    repeat: null,
    limitsInARow: 0,
    limitedUntil: {},
    gatesOk: null,
    failingChecks: "",
    reviewFindings: "",
    review: previous.review ?? null,
    reviewBase: previous.reviewBase ?? null,
    fingerprint: null,
    task: null,
    resources: null,
    question: previous.question ?? null,
    answer: previous.answer ?? null,
    startedAtMs,
    lastAction: "starting",
  };
}

/** Token totals with every kind (a status written before cache tokens were kept has only input and output). */
export function allKinds(
  tokens: { input: number; output: number; cacheRead?: number; cacheWrite?: number } | null | undefined,
): Tally["tokens"] {
  return {
    input: tokens?.input ?? 0,
    output: tokens?.output ?? 0,
    cacheRead: tokens?.cacheRead ?? 0,
    cacheWrite: tokens?.cacheWrite ?? 0,
  };
}

/** `tokens` with `more` added, kind by kind. */
export function addTokens(
  tokens: Tally["tokens"],
  more: { input: number; output: number; cacheRead?: number; cacheWrite?: number } | null | undefined,
): Tally["tokens"] {
  return {
    input: tokens.input + (more?.input ?? 0),
    output: tokens.output + (more?.output ?? 0),
    cacheRead: tokens.cacheRead + (more?.cacheRead ?? 0),
    cacheWrite: tokens.cacheWrite + (more?.cacheWrite ?? 0),
  };
}

/** Why an iteration counts as failed, or null when it did not fail. */
export function failureOf(run: FinishedRun): string | null {
  if (run.endedBy === "timeout") return "timed out";
  if (run.endedBy === "idle_timeout") return "idle timeout";
  if (run.endedBy === "memory_cap") return "memory cap reached (--memory-max): the kernel killed a process";
  // Killed by the OOM killer while ralph's own cap (if any) was not reached: the machine's or a container's limit.
  if ((run.resources?.oom_kills ?? 0) > 0)
    return "out of memory: the kernel killed a process under a memory limit outside ralph (the machine's or a container's), not --memory-max";
  if (run.outcome.error) return `${run.outcome.error.kind}: ${run.outcome.error.message}`;
  // Ended for lingering after its result: the result counts, whatever the ending signal made of the exit status.
  if (run.endedBy === "lingered") return null;
  if (!run.outcome.sawResult)
    return run.exit.code === 0 ? "no result reported" : `exit ${describeExit(run)} without a result`;
  if (run.exit.code !== 0 && !run.outcome.finalMessage) return `exit ${describeExit(run)}`;
  return null;
}

function describeExit(run: FinishedRun): string {
  return run.exit.signal ?? String(run.exit.code);
}

/** An agent error no retry can fix (authentication, unknown model, bad flag), or null. */
export function fatalError(run: FinishedRun): string | null {
  if (run.endedBy !== null && run.endedBy !== "agent_error") return null;
  const error = run.outcome.error;
  return error && (error.kind === "auth" || error.kind === "config")
    ? `${error.kind === "auth" ? "authentication failed" : "the agent rejected its configuration"}: ${error.message}`
    : null;
}

/** Why a promise in the final message did not count (undefined when there is nothing to say). */
export function promiseIgnored(
  claim: ClaimVerdict | null,
  failure: string | null,
  criteriaPass: boolean,
): string | undefined {
  if (!claim || claim.reason === "absent") return undefined;
  if (claim.found) return failure ? "iteration_failed" : criteriaPass ? undefined : "criteria_failing";
  return claim.reason;
}

/** Why configured checks did not run this iteration (undefined when they ran or none exist). */
export function checksSkipped(
  configured: number,
  ran: number,
  failure: string | null,
  dryRun: boolean,
  claim: ClaimVerdict | null,
): string | undefined {
  if (configured === 0 || ran > 0) return undefined;
  if (failure) return "iteration_failed";
  if (dryRun) return "dry_run";
  return claim && !claim.found ? "promise_not_claimed" : undefined;
}

/** The billing error an agent run reports (credit balance too low, insufficient quota), or null. */
export function billingError(run: FinishedRun): string | null {
  return billingText(run.outcome);
}

/** The outcome's error or limit message when it is a billing failure, or null. */
function billingText(outcome: AgentOutcome): string | null {
  for (const text of [outcome.error?.message, outcome.limit?.message]) if (text && isBillingFailure(text)) return text;
  return null;
}

/** The provider usage limit an outcome reports, if any; a billing error is none unless `onBilling` is "wait". */
export function limitOf(outcome: AgentOutcome, onBilling: "fail" | "wait" = "wait"): LimitInfo | null {
  if (onBilling === "fail" && billingText(outcome) !== null) return null;
  return (
    outcome.limit ?? (outcome.error?.kind === "rate_limit" ? { message: outcome.error.message, resetAt: null } : null)
  );
}

/** The tally once an agent call's spend is added. */
export function withSpend(tally: Tally, outcome: AgentOutcome): Tally {
  return {
    ...tally,
    calls: tally.calls + 1,
    costUsd: tally.costUsd + (outcome.costUsd ?? 0),
    tokens: addTokens(tally.tokens, outcome.tokens),
    sessionId: outcome.sessionId ?? tally.sessionId,
  };
}

/** The tally with the resource figures of the iteration's agent tree, when a cgroup counted them. */
export function withResources(tally: Tally, run: FinishedRun): Tally {
  return run.resources ? { ...tally, resources: run.resources } : tally;
}

/** How long to wait when the provider gave no reset time: doubling from 1 minute up to 15 minutes. */
export function fallbackWaitMs(limitsInARow: number): number {
  return Math.min(15 * 60_000, 60_000 * 2 ** Math.max(0, limitsInARow - 1));
}

/** The report of an agent iteration; `tally` already holds its spend. */
export function agentReport(
  attempt: Attempt,
  run: FinishedRun,
  tally: Tally,
  result: IterationResult,
  judged: {
    claim: ClaimVerdict | null;
    verdicts: readonly CriterionVerdict[];
    error: string | null;
    limit?: LimitInfo;
    promiseIgnored?: string | undefined;
    checksSkipped?: string | undefined;
  },
): IterationReport {
  const { outcome } = run;
  return {
    iteration: attempt.iteration,
    result,
    sessionId: outcome.sessionId ?? null,
    claim: judged.claim,
    verdicts: judged.verdicts,
    agent: {
      agent: attempt.agent,
      task: attempt.task,
      exitCode: run.exit.code,
      exitSignal: run.exit.signal,
      endedBy: run.endedBy,
      error: judged.error,
      durationMs: run.durationMs,
      costUsd: outcome.costUsd ?? null,
      ...(outcome.costSource ? { costSource: outcome.costSource } : {}),
      costTotalUsd: tally.costUsd,
      tokens: outcome.tokens ?? null,
      leftovers: run.leftovers,
      resources: run.resources ?? null,
      ...(run.commit !== undefined ? { commit: run.commit } : {}),
      ...(judged.promiseIgnored ? { promiseIgnored: judged.promiseIgnored } : {}),
      ...(judged.checksSkipped ? { checksSkipped: judged.checksSkipped } : {}),
      ...(judged.limit ? { limit: { resetAt: judged.limit.resetAt?.toISOString() ?? null } } : {}),
      ...(judged.error !== null && run.stderrTail ? stderrFigure(run.stderrTail) : {}),
    },
  };
}

/** How many of the last stderr lines a failed iteration's line shows, and how much of each. */
const STDERR_LINES = 3;
const STDERR_LINE_CHARS = 300;

/** The last few non-empty lines of a failed agent's stderr: usually why it failed (`sh: cannot open …`). */
function stderrFigure(tail: string): { stderrTail?: string[] } {
  const lines = tail
    // eslint-disable-next-line no-control-regex -- colour codes are what is taken out
    .replace(/\x1b\[[0-9;?]*[A-Za-z]/g, "")
    .split(/\r?\n/)
    .map((line) => line.trimEnd())
    .filter((line) => line.trim() !== "");
  const last = lines
    .slice(-STDERR_LINES)
    .map((line) => (line.length > STDERR_LINE_CHARS ? `${line.slice(0, STDERR_LINE_CHARS)}…` : line));
  return last.length > 0 ? { stderrTail: last } : {};
}
