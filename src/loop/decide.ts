// After an agent returns: record the iteration, then decide between DONE, FAILED, STALLED or another round.
import { failingContext } from "./criteria.js";
import type { Ending } from "./finish-run.js";
import type { LoopState } from "./loop-state.js";
import { describeChange, takeFingerprint } from "./progress-fingerprint.js";
import { judgeCompletion } from "./judge-completion.js";
import type { AgentRun } from "./run-agent.js";
import type { AgentOutcome, LimitInfo } from "../agents/types.js";
import type { ResourceFigures } from "../process/agent-cgroup.js";
import type { RunStatus } from "../store/status-file.js";
import type { PromiseVerdict } from "./promise.js";
import { waitForLimit } from "./wait-for-limit.js";

/** One finished iteration, as the decision sees it. */
export interface FinishedIteration {
  iteration: number;
  task: string | null;
  prompt: string;
  run: Extract<AgentRun, { kind: "finished" }>;
}

/** Why an iteration counts as failed, or null when it did not fail. */
export function failureOf(run: FinishedIteration["run"]): string | null {
  if (run.endedBy === "timeout") return "timed out";
  if (run.endedBy === "idle_timeout") return "idle timeout";
  if (run.endedBy === "memory_cap" || (run.resources?.oom_kills ?? 0) > 0) return "memory cap reached (--memory-max): the kernel killed a process";
  if (run.outcome.error) return `${run.outcome.error.kind}: ${run.outcome.error.message}`;
  if (!run.outcome.sawResult) return run.exit.code === 0 ? "no result reported" : `exit ${describeExit(run)} without a result`;
  if (run.exit.code !== 0 && !run.outcome.finalMessage) return `exit ${describeExit(run)}`;
  return null;
}

/** The progress.txt fields of an iteration's resource figures. */
function resourceFields(resources: ResourceFigures | null | undefined): Array<[string, number | undefined]> {
  if (!resources) return [];
  return [
    ["cpu_seconds", resources.cpu_seconds ?? undefined],
    ["peak_memory_bytes", resources.peak_memory_bytes ?? undefined],
    ["peak_pids", resources.peak_pids ?? undefined],
    ["oom_kills", resources.oom_kills || undefined],
  ];
}

function describeExit(run: FinishedIteration["run"]): string {
  return run.exit.signal ?? String(run.exit.code);
}

/** The run's call count, spend and tokens once this iteration's are added. */
function spendAfter(status: Readonly<RunStatus>, outcome: AgentOutcome): Pick<RunStatus, "calls" | "cost_usd" | "tokens"> {
  return {
    calls: status.calls + 1,
    cost_usd: status.cost_usd + (outcome.costUsd ?? 0),
    tokens: { input: status.tokens.input + (outcome.tokens?.input ?? 0), output: status.tokens.output + (outcome.tokens?.output ?? 0) },
  };
}

/** Records the iteration and returns the Ending it leads to, or null to go on. */
export async function decideAfterIteration(loop: LoopState, done: FinishedIteration): Promise<Ending | null> {
  const { record, deps } = loop;
  const { outcome } = done.run;
  const limit = outcome.limit ?? (outcome.error?.kind === "rate_limit" ? { message: outcome.error.message, resetAt: null } : null);
  if (limit && done.run.endedBy === null) return handleLimit(loop, done, limit);
  loop.consecutiveLimits = 0;
  const failure = failureOf(done.run);
  const promiseText = loop.state.completionPromise;
  const criteria = loop.state.completionCriteria;
  const { done: isDone, promise, verdicts } = await judgeCompletion({
    promiseText,
    finalMessage: outcome.finalMessage,
    prompt: done.prompt,
    criteria,
    // A failed iteration is judged by nothing; a dry run starts nothing, the user's check commands included.
    mayCheck: !failure && !loop.options.settings.dryRun,
    cwd: loop.options.projectDir,
    tasksFile: loop.tasksFile ?? undefined,
    signal: deps.signals.interrupted,
    record,
    iteration: done.iteration,
  });
  const criteriaPass = verdicts.every((verdict) => verdict.passed);

  const spend = spendAfter(record.status, outcome);
  const cost = spend.cost_usd;
  loop.failures = failure ? loop.failures + 1 : 0;
  record.update({
    ...spend,
    session_id: outcome.sessionId ?? record.status.session_id,
    failures: loop.failures,
    last_action: `iteration ${done.iteration} ${failure ? `failed: ${failure}` : "finished"}`,
  });
  const result = failure ? (done.run.endedBy === "timeout" ? "timeout" : "failed") : isDone ? "done" : "continue";
  record.progress([
    ["iteration", done.iteration],
    ["task", done.task],
    ["agent_exit", done.run.exit.signal ?? done.run.exit.code],
    ["ended_by", done.run.endedBy],
    ["result", result],
    ["error", failure],
    ["duration_ms", done.run.durationMs],
    ["cost_usd", outcome.costUsd],
    ["cost_total_usd", cost.toFixed(6)],
    ["tokens_in", outcome.tokens?.input],
    ["tokens_out", outcome.tokens?.output],
    ["session_id", outcome.sessionId],
    ["promise_found", promise ? promise.found : undefined],
    ["criteria", verdicts.length > 0 ? verdicts.map((v) => `${v.type}:${v.passed ? "pass" : "fail"}`).join(",") : undefined],
    ["leftover_processes", done.run.leftovers || undefined],
    ...resourceFields(done.run.resources),
  ]);
  record.event("iteration_ended", {
    iteration: done.iteration,
    exit_code: done.run.exit.code,
    exit_signal: done.run.exit.signal,
    ended_by: done.run.endedBy,
    duration_ms: done.run.durationMs,
    result,
    error: failure,
    cost_usd: outcome.costUsd ?? null,
    cost_total_usd: cost,
    tokens: outcome.tokens ?? null,
    session_id: outcome.sessionId ?? null,
    promise: promise ? promise.reason : null,
    ...promiseIgnored(promise, failure, criteriaPass),
    ...checksSkipped(criteria.length, verdicts.length, failure, loop.options.settings.dryRun, promise),
    criteria_passed: verdicts.length > 0 ? criteriaPass : null,
    resources: done.run.resources ?? null,
  });
  if (done.run.resources) record.update({ resources: done.run.resources });
  record.log(`=== Completed iteration ${done.iteration} ===`);

  const interrupted = loop.interruption();
  if (interrupted) return interrupted;
  if (done.run.endedBy === "stop_now") return { reason: "STOPPED", detail: "stop --now ended the agent" };
  if (failure) {
    const fatal = fatalError(done.run);
    if (fatal) return { reason: "FAILED", detail: `${fatal}; no retry can fix this, so the run ends now` };
    record.log(`iteration ${done.iteration} failed (${failure}); ${loop.failures}/${loop.options.settings.maxFailures} consecutive failures`);
    if (loop.failures >= loop.options.settings.maxFailures) {
      return { reason: "FAILED", detail: `${loop.failures} consecutive failed iterations, last: ${failure}` };
    }
    return null;
  }
  if (isDone) {
    record.log(criteria.length > 0 ? "LOOP_COMPLETE: all criteria met." : "LOOP_COMPLETE: the promise was found (no completion criteria are set).");
    return { reason: "DONE", detail: promiseText ? `promise <promise>${promiseText}</promise> found${criteria.length ? " and criteria passed" : ""}` : "all criteria passed" };
  }
  loop.failingChecks = promise?.found && !criteriaPass ? failingContext(verdicts) : "";
  if (loop.failingChecks) record.log("promise claimed but a completion check failed; its output goes into the next prompt");
  return checkStall(loop, done.iteration);
}

/** Why a promise in the final message did not count, as an iteration_ended field (empty when nothing to say). */
function promiseIgnored(promise: PromiseVerdict | null, failure: string | null, criteriaPass: boolean): { promise_ignored?: string } {
  if (!promise || promise.reason === "absent") return {};
  if (promise.found) return failure ? { promise_ignored: "iteration_failed" } : criteriaPass ? {} : { promise_ignored: "criteria_failing" };
  return { promise_ignored: promise.reason };
}

/** Why configured checks did not run this iteration, as an iteration_ended field (empty when they ran or none exist). */
function checksSkipped(configured: number, ran: number, failure: string | null, dryRun: boolean, promise: PromiseVerdict | null): { checks_skipped?: string } {
  if (configured === 0 || ran > 0) return {};
  if (failure) return { checks_skipped: "iteration_failed" };
  if (dryRun) return { checks_skipped: "dry_run" };
  return promise && !promise.found ? { checks_skipped: "promise_not_claimed" } : {};
}

/** An agent error no retry can fix (authentication, unknown model, bad flag), or null. */
function fatalError(run: FinishedIteration["run"]): string | null {
  if (run.endedBy !== null && run.endedBy !== "agent_error") return null;
  const error = run.outcome.error;
  return error && (error.kind === "auth" || error.kind === "config") ? `${error.kind === "auth" ? "authentication failed" : "the agent rejected its configuration"}: ${error.message}` : null;
}

async function checkStall(loop: LoopState, iteration: number): Promise<Ending | null> {
  const limit = loop.options.settings.stallLimit;
  if (limit === 0) return null;
  const now = await takeFingerprint(loop.options.projectDir, loop.tasksFile ?? undefined);
  if (!now.ok) {
    loop.record.log(`stall detection needs git: ${now.message}`);
    return null;
  }
  const before = loop.fingerprint;
  loop.fingerprint = now;
  const change = before ? describeChange(before, now) : "first fingerprint";
  loop.stalled = change === null ? loop.stalled + 1 : 0;
  loop.record.log(change === null ? `no progress in iteration ${iteration} (${loop.stalled}/${limit}): git HEAD ${now.head.slice(0, 12)}, working tree and task list unchanged` : `progress in iteration ${iteration}: ${change}`);
  return loop.stalled >= limit ? { reason: "STALLED", detail: `${loop.stalled} consecutive iterations without a change to the git tree, HEAD or task list` } : null;
}

/** A usage limit: the call and its spend are recorded, the iteration is not counted; wait, or stop. */
async function handleLimit(loop: LoopState, done: FinishedIteration, limit: LimitInfo): Promise<Ending | null> {
  const { record } = loop;
  const { outcome } = done.run;
  const spend = spendAfter(record.status, outcome);
  const cost = spend.cost_usd;
  record.update({ ...spend, iteration: done.iteration - 1 });
  record.progress([
    ["iteration", done.iteration],
    ["task", done.task],
    ["agent_exit", done.run.exit.signal ?? done.run.exit.code],
    ["result", "usage_limit"],
    ["error", limit.message],
    ["reset_at", limit.resetAt?.toISOString()],
    ["counted", false],
    ["cost_total_usd", cost.toFixed(6)],
  ]);
  record.event("iteration_ended", {
    iteration: done.iteration,
    exit_code: done.run.exit.code,
    exit_signal: done.run.exit.signal,
    duration_ms: done.run.durationMs,
    result: "usage_limit",
    error: limit.message,
    counted: false,
    cost_usd: outcome.costUsd ?? null,
    cost_total_usd: cost,
  });
  const interrupted = loop.interruption();
  if (interrupted) return interrupted;
  if (loop.options.settings.onLimit === "stop") {
    return { reason: "FAILED", detail: `provider usage limit reached (${limit.message})${limit.resetAt ? `, resets ${limit.resetAt.toISOString()}` : ""}; --on-limit stop` };
  }
  return waitForLimit(loop, done.iteration, limit);
}
