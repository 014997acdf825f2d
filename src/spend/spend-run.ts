// A run's place in the spend ledger: its record (family, budgets) made when it starts, and the call records
// it appends after each agent call. A child or resolve run of `--parallel` takes its family and budgets from
// its parent's record, never from a file in the project its agents could have changed.
import type { TokenUsage } from "../agents/types.js";
import type { Budget, CostSource, SpendCall, SpendRun, SpendTokens, TokenCaps } from "./spend-record.js";
import { appendCall, projectKey, readRun, writeRun } from "./spend-ledger.js";
import { computedCostUsd } from "./price-table.js";

/** What a run starts its spend record with. */
export interface SpendStart {
  projectDir: string;
  runId: string;
  parent: string | null;
  agent: string;
  model: string | null;
  maxCostUsd: number | null;
  maxTokens: TokenCaps | null;
  /** The budgets as read from ralph.yaml and the user config now (used unless a parent's record gives them). */
  budgets: { project: Budget | null; user: Budget | null };
  now: Date;
  /** When the run started, when that was before it was first recorded here (a hook-mode loop: at `hook start`). */
  startedAt?: Date;
  env: NodeJS.ProcessEnv;
}

/** Records the run in the spend ledger (once more when continued: its caps may have changed) and returns the record. */
export function openSpendRun(start: SpendStart): SpendRun {
  const project = projectKey(start.projectDir);
  const earlier = readRun(project, start.runId, start.env);
  const parent = start.parent !== null ? readRun(project, start.parent, start.env) : null;
  const at = (start.startedAt ?? start.now).toISOString();
  const own = {
    family_max_cost_usd: start.maxCostUsd,
    family_max_tokens: start.maxTokens,
    project_budget: start.budgets.project,
    user_budget: start.budgets.user,
  };
  const record: SpendRun = {
    v: 1,
    kind: "run",
    project,
    run: start.runId,
    parent: start.parent,
    family: parent?.family ?? start.parent ?? start.runId,
    family_since: parent?.family_since ?? earlier?.family_since ?? at,
    started_at: earlier?.started_at ?? at,
    agent: start.agent,
    model: start.model,
    // A child shares its family's caps and budgets as its parent recorded them when the family started.
    ...(parent
      ? {
          family_max_cost_usd: parent.family_max_cost_usd,
          family_max_tokens: parent.family_max_tokens,
          project_budget: parent.project_budget,
          user_budget: parent.user_budget,
        }
      : own),
  };
  writeRun(record, start.env);
  return record;
}

/** One agent call as the runner saw it. */
export interface CallSeen {
  role: SpendCall["role"];
  iteration: number | null;
  agent: string;
  /** The model asked for (`--model`), else the one the CLI named. */
  model: string | null;
  costUsd: number | null | undefined;
  tokens: TokenUsage | SpendTokens | null | undefined;
  durationMs: number | null;
  at: Date;
}

/** Tokens by kind from an agent's figures (missing kinds count 0). */
export function ledgerTokens(tokens: TokenUsage | SpendTokens | null | undefined): SpendTokens {
  if (!tokens) return { input: 0, output: 0, cache_read: 0, cache_write: 0 };
  const t = tokens as Partial<TokenUsage & SpendTokens>;
  const n = (value: number | undefined): number =>
    typeof value === "number" && Number.isFinite(value) && value > 0 ? Math.floor(value) : 0;
  return {
    input: n(t.input),
    output: n(t.output),
    cache_read: n(t.cache_read ?? t.cacheRead),
    cache_write: n(t.cache_write ?? t.cacheWrite),
  };
}

/** The ledger record of a call: its cost as the CLI reported it, else computed from its tokens, else unknown. */
export function callRecord(run: SpendRun, seen: CallSeen): SpendCall {
  const tokens = ledgerTokens(seen.tokens);
  const reported =
    typeof seen.costUsd === "number" && Number.isFinite(seen.costUsd) && seen.costUsd >= 0 ? seen.costUsd : null;
  const computed =
    reported === null && tokens.input + tokens.output + tokens.cache_read + tokens.cache_write > 0
      ? computedCostUsd(seen.model, tokens)
      : null;
  const source: CostSource = reported !== null ? "reported" : computed !== null ? "computed" : "unknown";
  return {
    v: 1,
    kind: "call",
    at: seen.at.toISOString(),
    project: run.project,
    run: run.run,
    parent: run.parent,
    family: run.family,
    role: seen.role,
    iteration: seen.iteration,
    agent: seen.agent,
    model: seen.model,
    cost_usd: reported ?? computed,
    cost_source: source,
    tokens,
    duration_ms: seen.durationMs,
  };
}

/** Appends the call to the ledger and returns its record. */
export function recordCall(run: SpendRun, seen: CallSeen, env: NodeJS.ProcessEnv): SpendCall {
  const call = callRecord(run, seen);
  appendCall(call, env);
  return call;
}
