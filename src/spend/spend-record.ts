// The records of the spend ledger (spend-ledger.ts): one `call` per agent call ralph made or saw (an
// iteration, a reviewer, a hook-mode turn), and one `run` per run with the budgets fixed when it started.
// Everything ralph shows about money and tokens is summed from these records.

/** Tokens by kind, as the ledger keeps them: input excludes the cached part, which has kinds of its own. */
export interface SpendTokens {
  input: number;
  output: number;
  cache_read: number;
  cache_write: number;
}

/** Where a cost comes from: the agent CLI reported it, ralph computed it from tokens and its price table, or neither. */
export type CostSource = "reported" | "computed" | "unknown";

/** One agent call's spend. */
export interface SpendCall {
  v: 1;
  kind: "call";
  /** When the call ended (ISO). */
  at: string;
  /** The project's directory (canonical): what project budgets and `ralph spend` group by. */
  project: string;
  run: string;
  parent: string | null;
  /** The run whose budget this run shares: its parent's family, else the run itself. */
  family: string;
  role: "iteration" | "review" | "hook";
  iteration: number | null;
  agent: string;
  model: string | null;
  /** Null when no cost is known (`cost_source: unknown`). */
  cost_usd: number | null;
  cost_source: CostSource;
  tokens: SpendTokens;
  duration_ms: number | null;
}

/** A daily and a weekly cap in US dollars, and what a run does once one is met. */
export interface Budget {
  daily_usd: number | null;
  weekly_usd: number | null;
  on_exhausted: "stop" | "wait";
}

/** Token caps by kind (`total`: every kind together); null: none. */
export interface TokenCaps {
  total?: number;
  input?: number;
  output?: number;
  cache_read?: number;
  cache_write?: number;
}

/** A run as the spend ledger knows it: who it belongs to and the budgets it started with. */
export interface SpendRun {
  v: 1;
  kind: "run";
  project: string;
  run: string;
  parent: string | null;
  family: string;
  /** When the family's first run started: its spend is summed from that day on. */
  family_since: string;
  started_at: string;
  agent: string;
  model: string | null;
  /** The family's `--max-cost` (its first run's): every run of the family stops starting iterations once it is spent. */
  family_max_cost_usd: number | null;
  /** The family's `--max-tokens`. */
  family_max_tokens: TokenCaps | null;
  /** The project's budget (ralph.yaml `budget:`), as read when the family started. */
  project_budget: Budget | null;
  /** The user's budget over every project (the user-level config), as read when the family started. */
  user_budget: Budget | null;
}

/** No tokens. */
export const NO_TOKENS: SpendTokens = { input: 0, output: 0, cache_read: 0, cache_write: 0 };

const count = (value: unknown): number =>
  typeof value === "number" && Number.isFinite(value) && value > 0 ? Math.floor(value) : 0;

/** `value` as tokens by kind (anything missing, negative or not a number counts 0). */
export function asTokens(value: unknown): SpendTokens {
  const v = (value && typeof value === "object" ? value : {}) as Record<string, unknown>;
  return {
    input: count(v.input),
    output: count(v.output),
    cache_read: count(v.cache_read ?? v.cacheRead),
    cache_write: count(v.cache_write ?? v.cacheWrite),
  };
}

/** A ledger line as a call record, or null when it is not one (a torn or foreign line is skipped). */
export function parseCall(line: string): SpendCall | null {
  let value: Record<string, unknown>;
  try {
    value = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return null;
  }
  if (
    !value ||
    value.v !== 1 ||
    value.kind !== "call" ||
    typeof value.run !== "string" ||
    typeof value.project !== "string" ||
    typeof value.at !== "string"
  )
    return null;
  const cost =
    typeof value.cost_usd === "number" && Number.isFinite(value.cost_usd) && value.cost_usd >= 0
      ? value.cost_usd
      : null;
  const source = value.cost_source === "reported" || value.cost_source === "computed" ? value.cost_source : "unknown";
  return {
    v: 1,
    kind: "call",
    at: value.at,
    project: value.project,
    run: value.run,
    parent: typeof value.parent === "string" ? value.parent : null,
    family: typeof value.family === "string" ? value.family : value.run,
    role: value.role === "review" || value.role === "hook" ? value.role : "iteration",
    iteration: typeof value.iteration === "number" ? value.iteration : null,
    agent: typeof value.agent === "string" ? value.agent : "unknown",
    model: typeof value.model === "string" ? value.model : null,
    cost_usd: cost === null ? null : cost,
    cost_source: cost === null ? "unknown" : source,
    tokens: asTokens(value.tokens),
    duration_ms: typeof value.duration_ms === "number" ? value.duration_ms : null,
  };
}
