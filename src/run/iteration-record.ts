// What one ended iteration leaves in the record, the same for `ralph run` and the in-session hook:
// a progress.txt block, an `iteration_ended` event and a log line; verdicts of completion checks likewise.
import type { ClaimVerdict } from "../judge/claim.js";
import type { CriterionVerdict } from "../judge/criteria.js";
import type { EventBody, EventTokens, IterationResult } from "../store/event-log.js";
import type { ResourceFigures } from "../process/agent-cgroup.js";
import type { RecordEntry } from "./run-record.js";

/** What an agent process did in an iteration (`ralph run` only). */
export interface AgentFigures {
  /** Which agent ran (the run's own, or a fallback). */
  agent?: string;
  task: string | null;
  exitCode: number | null;
  exitSignal: string | null;
  endedBy: string | null;
  error: string | null;
  durationMs: number;
  costUsd: number | null;
  /** Where costUsd comes from, once the spend ledger recorded the call. */
  costSource?: "reported" | "computed" | "unknown";
  costTotalUsd: number;
  tokens: EventTokens | null;
  leftovers: number;
  /** What the agent tree used, where a cgroup counted it. */
  resources?: ResourceFigures | null;
  /** Why a promise in the final message did not count. */
  promiseIgnored?: string;
  /** Why the configured checks did not run. */
  checksSkipped?: string;
  /** Set for a usage limit: the iteration is not counted, and may say when the limit resets. */
  limit?: { resetAt: string | null };
  /** With `--commit iteration`: the commit made after the agent (null: nothing to commit), or why none was. */
  commit?: { sha: string; files: number } | { error: string } | null;
  /** A failed iteration's last lines of the agent's stderr. */
  stderrTail?: string[];
}

/** How the in-session hook saw the iteration. */
export interface HookFigures {
  messageSource: string;
  stopHookActive: boolean;
  blocksThisTurn: number;
  /** The session's usage in this iteration, when its transcript states it. */
  usage?: {
    tokens: EventTokens | null;
    costUsd: number | null;
    costTotalUsd: number;
    costSource?: "reported" | "computed" | "unknown";
  };
}

/** One ended iteration, as both modes report it. */
export interface IterationReport {
  iteration: number;
  result: IterationResult;
  sessionId: string | null;
  claim: ClaimVerdict | null;
  verdicts: readonly CriterionVerdict[];
  agent?: AgentFigures;
  hook?: HookFigures;
}

/** The progress block, `iteration_ended` event and log line of an ended iteration. */
export function iterationEntries(report: IterationReport): RecordEntry[] {
  const { agent, hook, claim, verdicts } = report;
  const criteria =
    verdicts.length > 0 ? verdicts.map((v) => `${v.type}:${v.passed ? "pass" : "fail"}`).join(",") : undefined;
  const entries: RecordEntry[] = [
    {
      kind: "progress",
      block: [
        ["iteration", report.iteration],
        ["mode", hook ? "hook" : undefined],
        ["agent", agent?.agent],
        ["task", agent?.task],
        ["agent_exit", agent ? (agent.exitSignal ?? agent.exitCode) : undefined],
        ["ended_by", agent?.endedBy],
        ["result", report.result],
        ["error", agent?.error],
        ["reset_at", agent?.limit?.resetAt],
        ["counted", agent?.limit ? false : undefined],
        ["duration_ms", agent && !agent.limit ? agent.durationMs : undefined],
        ["cost_usd", agent?.limit ? undefined : agent?.costUsd],
        ["cost_source", agent?.limit ? undefined : agent?.costSource],
        ["cost_total_usd", agent?.costTotalUsd.toFixed(6)],
        ["tokens_in", agent?.limit ? undefined : agent?.tokens?.input],
        ["tokens_out", agent?.limit ? undefined : agent?.tokens?.output],
        ["tokens_cache_read", agent?.limit ? undefined : agent?.tokens?.cacheRead],
        ["tokens_cache_write", agent?.limit ? undefined : agent?.tokens?.cacheWrite],
        ["session_id", report.sessionId],
        ["message_source", hook?.messageSource],
        ["promise_found", claim ? claim.found : undefined],
        ["promise_reason", claim && !claim.found ? claim.reason : undefined],
        ["criteria", criteria],
        ["leftover_processes", agent?.leftovers || undefined],
        ["cpu_seconds", agent?.resources?.cpu_seconds ?? undefined],
        ["peak_memory_bytes", agent?.resources?.peak_memory_bytes ?? undefined],
        ["peak_pids", agent?.resources?.peak_pids ?? undefined],
        ["oom_kills", agent?.resources?.oom_kills || undefined],
        [
          "commit",
          agent?.commit === undefined ? undefined : agent.commit && "sha" in agent.commit ? agent.commit.sha : "none",
        ],
        ["commit_files", agent?.commit && "sha" in agent.commit ? agent.commit.files : undefined],
        ["commit_error", agent?.commit && "error" in agent.commit ? agent.commit.error : undefined],
        ["stop_hook_active", hook?.stopHookActive],
        ["blocks_this_turn", hook?.blocksThisTurn],
      ],
    },
    { kind: "event", body: endedEvent(report) },
  ];
  if (!agent?.limit) entries.push({ kind: "log", line: `=== Completed iteration ${report.iteration} ===` });
  return entries;
}

function endedEvent(report: IterationReport): EventBody {
  const { agent, hook } = report;
  const common = {
    type: "iteration_ended" as const,
    iteration: report.iteration,
    result: report.result,
  };
  if (agent?.limit) {
    return {
      ...common,
      ...(agent.agent ? { agent: agent.agent } : {}),
      exit_code: agent.exitCode,
      exit_signal: agent.exitSignal,
      duration_ms: agent.durationMs,
      error: agent.error,
      counted: false,
      cost_usd: agent.costUsd,
      cost_total_usd: agent.costTotalUsd,
    };
  }
  const verdict = {
    session_id: report.sessionId,
    promise: report.claim ? report.claim.reason : null,
    criteria_passed: report.verdicts.length > 0 ? report.verdicts.every((v) => v.passed) : null,
  };
  if (hook) {
    const usage = hook.usage
      ? {
          tokens: hook.usage.tokens,
          cost_usd: hook.usage.costUsd,
          ...(hook.usage.costSource ? { cost_source: hook.usage.costSource } : {}),
          cost_total_usd: hook.usage.costTotalUsd,
        }
      : {};
    return {
      ...common,
      ...verdict,
      message_source: hook.messageSource,
      stop_hook_active: hook.stopHookActive,
      blocks_this_turn: hook.blocksThisTurn,
      ...usage,
    };
  }
  return {
    ...common,
    ...(agent?.agent ? { agent: agent.agent } : {}),
    exit_code: agent?.exitCode ?? null,
    exit_signal: agent?.exitSignal ?? null,
    ended_by: agent?.endedBy ?? null,
    duration_ms: agent?.durationMs ?? 0,
    error: agent?.error ?? null,
    cost_usd: agent?.costUsd ?? null,
    ...(agent?.costSource ? { cost_source: agent.costSource } : {}),
    cost_total_usd: agent?.costTotalUsd ?? 0,
    tokens: agent?.tokens ?? null,
    ...verdict,
    ...(agent?.promiseIgnored ? { promise_ignored: agent.promiseIgnored } : {}),
    ...(agent?.checksSkipped ? { checks_skipped: agent.checksSkipped } : {}),
    ...(agent?.stderrTail ? { stderr_tail: agent.stderrTail } : {}),
    resources: agent?.resources ?? null,
    ...commitFields(agent?.commit),
  };
}

/** The commit fields of `iteration_ended`: present only when the run commits its iterations. */
function commitFields(commit: AgentFigures["commit"]): {
  commit?: string | null;
  commit_files?: number;
  commit_error?: string;
} {
  if (commit === undefined) return {};
  if (commit === null) return { commit: null };
  return "sha" in commit
    ? { commit: commit.sha, commit_files: commit.files }
    : { commit: null, commit_error: commit.error };
}

/** The `criteria_checked` event, progress lines and log line of each verdict. */
export function verdictEntries(iteration: number, verdicts: readonly CriterionVerdict[]): RecordEntry[] {
  return verdicts.flatMap((verdict): RecordEntry[] => [
    {
      kind: "event",
      body: {
        type: "criteria_checked",
        iteration,
        criterion: verdict.type,
        check: verdict.check,
        passed: verdict.passed,
        detail: verdict.detail,
      },
    },
    {
      kind: "progress",
      block: [
        ["criterion", `${verdict.type}: ${verdict.check}`],
        ["criterion_passed", verdict.passed],
        ["criterion_detail", verdict.detail],
      ],
    },
    {
      kind: "log",
      line: `check ${verdict.passed ? "passed" : "FAILED"}: ${verdict.type}: ${verdict.check}${verdict.passed ? "" : ` (${verdict.detail})`}`,
    },
  ]);
}
