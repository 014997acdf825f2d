// Builds a run's report from its record (status.json and events.jsonl, its children's too) and its diffstat.
import type { RunEvent } from "../store/event-log.js";
import type { RunStatus } from "../store/status-file.js";
import type { ReportIteration, RunReport } from "./report-schema.js";
import type { SpendCall } from "../spend/spend-record.js";
import { spendJson, sumCalls } from "../spend/spend-totals.js";

/** One run's record as read from its directory. */
export interface RunRecordRead {
  id: string;
  status: RunStatus;
  events: RunEvent[];
  /** Its agent calls as ralph's spend ledger recorded them (a --parallel parent: its family's); absent: the events' figures. */
  calls?: SpendCall[];
}

/** What `git diff --stat` said of base..branch. */
export interface Diffstat {
  files_changed: number;
  insertions: number;
  deletions: number;
  text: string;
}

const str = (value: unknown): string | null => (typeof value === "string" ? value : null);
const num = (value: unknown): number | null => (typeof value === "number" && Number.isFinite(value) ? value : null);

/** A run's spend: the ledger's, else (a run recorded before the ledger) what its status says. */
function spendOfRecord(
  record: RunRecordRead | undefined,
  fallback: number | null,
): { cost_usd: number | null; cost_source: RunReport["cost_source"] } {
  if (record?.calls) {
    const totals = sumCalls(record.calls);
    return { cost_usd: totals.cost_usd, cost_source: totals.cost_source };
  }
  return { cost_usd: fallback, cost_source: fallback === null ? "none" : "reported" };
}

/** Each iteration's cost (its agent's and its reviewers' calls) as the ledger has it. */
function ledgerCosts(calls: readonly SpendCall[]): Map<number, number | null> {
  const costs = new Map<number, number | null>();
  for (const call of calls) {
    if (call.iteration === null) continue;
    const before = costs.get(call.iteration) ?? null;
    costs.set(
      call.iteration,
      call.cost_usd === null ? before : Math.round(((before ?? 0) + call.cost_usd) * 1e6) / 1e6,
    );
  }
  return costs;
}

/**
 * The iterations of one run, from its events (a usage-limit retry is folded into the iteration it repeats);
 * costs from `calls` (the spend ledger's) when given.
 * A duration nobody measured stays null (shown as –), never 0: in hook mode an iteration after the first lasts
 * from the stop the hook blocked (its iteration_started) to the next stop; the first begins whenever the person
 * gives Claude Code its first message, which ralph does not see.
 */
export function iterationsOf(events: RunEvent[], calls?: readonly SpendCall[]): ReportIteration[] {
  const byNumber = new Map<number, ReportIteration>();
  const hook = events.some((event) => event.type === "run_started" && event.mode === "hook");
  const first = num(events.find((event) => event.type === "iteration_started")?.iteration);
  const startedAt = new Map<number, number>();
  for (const event of events) {
    const number = num(event.iteration);
    if (number === null) continue;
    const entry = byNumber.get(number) ?? {
      iteration: number,
      result: null,
      agent: null,
      task: null,
      duration_ms: null,
      cost_usd: null,
      checks: [],
      reviews: [],
      commit: null,
      planted: [],
    };
    byNumber.set(number, entry);
    if (event.type === "iteration_started") {
      startedAt.set(number, Date.parse(String(event.ts)));
      entry.task = str(event.task);
      entry.agent = str(event.agent) ?? entry.agent;
    } else if (event.type === "iteration_ended") {
      entry.result = str(event.result);
      entry.agent = str(event.agent) ?? entry.agent;
      const measured =
        num(event.duration_ms) ??
        (hook && number !== first ? Date.parse(String(event.ts)) - (startedAt.get(number) ?? Number.NaN) : null);
      if (measured !== null && Number.isFinite(measured) && measured >= 0)
        entry.duration_ms = (entry.duration_ms ?? 0) + measured;
      entry.cost_usd =
        num(event.cost_usd) === null ? entry.cost_usd : (entry.cost_usd ?? 0) + (num(event.cost_usd) ?? 0);
      entry.commit = str(event.commit) ?? entry.commit;
    } else if (event.type === "sandbox_tamper") {
      entry.planted.push(...(Array.isArray(event.paths) ? event.paths.map(String) : []));
    } else if (event.type === "criteria_checked") {
      const verdict = {
        criterion: String(event.criterion),
        check: String(event.check),
        passed: event.passed === true,
        detail: String(event.detail ?? ""),
      };
      (verdict.criterion === "review" ? entry.reviews : entry.checks).push(verdict);
    }
  }
  const sorted = [...byNumber.values()].sort((a, b) => a.iteration - b.iteration);
  if (!calls) return sorted;
  const costs = ledgerCosts(calls);
  return sorted.map((entry) => ({ ...entry, cost_usd: costs.get(entry.iteration) ?? null }));
}

function endedEvent(events: RunEvent[]): RunEvent | undefined {
  return [...events].reverse().find((event) => event.type === "run_ended");
}

function question(record: RunRecordRead): string | null {
  return record.status.question && !record.status.answer && record.status.state !== "ended"
    ? record.status.question
    : null;
}

/** The report of `run`, with `children` (a --parallel parent's child and resolve runs) and its diffstat. */
export function buildReport(run: RunRecordRead, children: RunRecordRead[], diffstat: Diffstat | null): RunReport {
  const { status, events } = run;
  const started = events.find((event) => event.type === "run_started" && typeof event.base === "string");
  const ended = endedEvent(events);
  const childById = new Map(children.map((child) => [child.id, child]));
  const merges = new Map<string, RunEvent>();
  for (const event of events)
    if (event.type === "child_merged" || event.type === "merge_abandoned") merges.set(String(event.child), event);
  const endings = new Map<string, RunEvent>();
  for (const event of events) if (event.type === "child_ended") endings.set(String(event.child), event);
  const reportChildren = events
    .filter((event) => event.type === "child_started")
    .map((event) => {
      const id = String(event.child);
      const record = childById.get(id);
      const end = endings.get(id);
      const merge = merges.get(id);
      const outcome = str(end?.reason) ?? record?.status.exit_reason ?? "running";
      return {
        run: id,
        task: String(event.task),
        branch: String(event.branch),
        outcome,
        detail: str(end?.detail) ?? record?.status.last_action ?? "",
        ...spendOfRecord(record, num(end?.cost_usd) ?? record?.status.cost_usd ?? null),
        merge: merge
          ? merge.type === "child_merged"
            ? ("merged" as const)
            : ("abandoned" as const)
          : outcome === "DONE"
            ? ("pending" as const)
            : null,
        merge_detail: merge ? (merge.type === "child_merged" ? String(merge.commit) : String(merge.reason)) : null,
        resolves: num(merge?.resolves) ?? 0,
        iterations: record ? iterationsOf(record.events, record.calls) : [],
      };
    });
  // Resolve iterations ran as runs of their own on the integration branch: listed with the children.
  for (const event of events.filter((candidate) => candidate.type === "resolve_started")) {
    const id = String(event.child);
    const record = childById.get(id);
    const end = events.find((candidate) => candidate.type === "resolve_ended" && candidate.child === id);
    reportChildren.push({
      run: id,
      task: String(event.task),
      branch: status.branch ?? "",
      outcome: str(end?.reason) ?? record?.status.exit_reason ?? "running",
      detail: `resolve ${String(event.attempt)} of the merge of ${String(event.for_child)}${event.checks_failed === true ? ": checks failed" : `: conflicts in ${(event.conflicts as string[] | undefined)?.join(", ") ?? "?"}`}`,
      ...spendOfRecord(record, num(end?.cost_usd) ?? record?.status.cost_usd ?? null),
      merge: null,
      merge_detail: null,
      resolves: 0,
      iterations: record ? iterationsOf(record.events, record.calls) : [],
    });
  }
  const open = [run, ...children].flatMap((record) => {
    const asked = question(record);
    return asked === null ? [] : [{ run: record.id, question: asked }];
  });
  return {
    schema_version: 1,
    run: run.id,
    outcome: status.exit_reason,
    exit_code: status.exit_code,
    reason: str(ended?.detail) ?? status.last_action,
    agent: status.agent,
    started_at: status.started_at,
    ended_at: status.ended_at,
    ...(run.calls
      ? spendJson(sumCalls(run.calls))
      : {
          cost_usd: status.cost_usd,
          cost_source: "reported" as const,
          calls: status.calls,
          tokens: {
            input: status.tokens.input,
            output: status.tokens.output,
            cache_read: status.tokens.cacheRead ?? 0,
            cache_write: status.tokens.cacheWrite ?? 0,
            total:
              status.tokens.input +
              status.tokens.output +
              (status.tokens.cacheRead ?? 0) +
              (status.tokens.cacheWrite ?? 0),
          },
        }),
    branch: status.branch ?? null,
    base: str(started?.base) ?? status.base ?? null,
    base_branch: started ? str(started.base_branch) : (status.base_branch ?? null),
    diffstat,
    iterations: iterationsOf(
      events,
      run.calls?.filter((call) => call.run === run.id),
    ),
    children: reportChildren,
    open_questions: open,
  };
}
