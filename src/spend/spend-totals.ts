// Summing ledger calls, and the one way ralph words the sums: tokens by kind with their total, and a cost
// that says where it comes from (reported by the agent CLI, estimated from tokens, or not known at all).
import { PRICES_AS_OF } from "./price-table.js";
import type { SpendCall, SpendTokens } from "./spend-record.js";

/** Tokens by kind and their total (every kind together: input, output, cache read and cache write). */
export interface TokenFigures extends SpendTokens {
  total: number;
}

/** What a set of calls spent. */
export interface SpendTotals {
  calls: number;
  /** The sum of the costs that are known; null when no call has one. */
  cost_usd: number | null;
  /** reported: every known cost came from the agent CLI; computed: every one from ralph's price table; mixed: both; none: no cost known. */
  cost_source: "reported" | "computed" | "mixed" | "none";
  /** Calls whose cost is not known (not reported, model not in the price table). */
  unknown_cost_calls: number;
  tokens: TokenFigures;
}

/** Nothing spent. */
export function noSpend(): SpendTotals {
  return {
    calls: 0,
    cost_usd: null,
    cost_source: "none",
    unknown_cost_calls: 0,
    tokens: { input: 0, output: 0, cache_read: 0, cache_write: 0, total: 0 },
  };
}

/** Totals being summed call by call: `add` each call in ledger order, then `totals`. */
export class CallSum {
  private readonly sums = noSpend();
  private cost = 0;
  private reported = false;
  private computed = false;

  add(call: SpendCall): void {
    const totals = this.sums;
    totals.calls += 1;
    totals.tokens.input += call.tokens.input;
    totals.tokens.output += call.tokens.output;
    totals.tokens.cache_read += call.tokens.cache_read;
    totals.tokens.cache_write += call.tokens.cache_write;
    if (call.cost_usd === null) totals.unknown_cost_calls += 1;
    else {
      this.cost += call.cost_usd;
      if (call.cost_source === "computed") this.computed = true;
      else this.reported = true;
    }
  }

  /** The totals of the calls added. */
  totals(): SpendTotals {
    const totals = { ...this.sums, tokens: { ...this.sums.tokens } };
    const t = totals.tokens;
    t.total = t.input + t.output + t.cache_read + t.cache_write;
    const { reported, computed } = this;
    if (reported || computed) totals.cost_usd = Math.round(this.cost * 1e6) / 1e6;
    totals.cost_source = reported && computed ? "mixed" : reported ? "reported" : computed ? "computed" : "none";
    return totals;
  }
}

/** The totals of `calls`. */
export function sumCalls(calls: Iterable<SpendCall>): SpendTotals {
  const sum = new CallSum();
  for (const call of calls) sum.add(call);
  return sum.totals();
}

/** The dollars a budget counts: the known costs (reported or computed). */
export function dollars(totals: SpendTotals): number {
  return totals.cost_usd ?? 0;
}

/** A token count, short: 950, 12.3k, 4.56M. */
export function tokenCount(count: number): string {
  if (count < 1000) return String(count);
  if (count < 1_000_000) return `${(count / 1000).toFixed(1)}k`;
  return `${(count / 1_000_000).toFixed(2)}M`;
}

/** Tokens as every view shows them: `in 4.0k · out 800 · cache read 20.0k · cache write 1.2k · total 26.0k`. */
export function tokensText(tokens: TokenFigures): string {
  return `in ${tokenCount(tokens.input)} · out ${tokenCount(tokens.output)} · cache read ${tokenCount(tokens.cache_read)} · cache write ${tokenCount(tokens.cache_write)} · total ${tokenCount(tokens.total)}`;
}

/** A cost as every view shows it: `$0.0400`, `~$0.0400 (estimated from tokens, prices of DATE)`, or `no cost reported`. */
export function costText(
  totals: Pick<SpendTotals, "cost_usd" | "cost_source"> & { unknown_cost_calls?: number },
): string {
  if (totals.cost_usd === null) return "no cost reported";
  const usd = `$${totals.cost_usd.toFixed(4)}`;
  const partly = (totals.unknown_cost_calls ?? 0) > 0 ? `; ${totals.unknown_cost_calls} call(s) reported no cost` : "";
  if (totals.cost_source === "computed") return `~${usd} (estimated from tokens, prices of ${PRICES_AS_OF}${partly})`;
  if (totals.cost_source === "mixed") return `~${usd} (part estimated from tokens, prices of ${PRICES_AS_OF}${partly})`;
  return partly ? `${usd} (${partly.slice(2)})` : usd;
}

/** Cost and tokens on one line: `$0.0400 · tokens in 4.0k · out 800 · …`. */
export function spendText(totals: SpendTotals): string {
  return `${costText(totals)} · tokens ${tokensText(totals.tokens)}`;
}

/** An event's or a status's tokens (`cacheRead`, `cacheWrite`) as figures with their total, or null when there are none. */
export function tokenFigures(value: unknown): TokenFigures | null {
  if (!value || typeof value !== "object") return null;
  const v = value as Record<string, unknown>;
  const n = (x: unknown): number => (typeof x === "number" && Number.isFinite(x) && x > 0 ? Math.floor(x) : 0);
  if (typeof v.input !== "number" && typeof v.output !== "number") return null;
  const t = {
    input: n(v.input),
    output: n(v.output),
    cache_read: n(v.cache_read ?? v.cacheRead),
    cache_write: n(v.cache_write ?? v.cacheWrite),
    total: 0,
  };
  t.total = t.input + t.output + t.cache_read + t.cache_write;
  return t;
}

/** The spend as JSON views give it: the same fields everywhere. */
export function spendJson(totals: SpendTotals): {
  cost_usd: number | null;
  cost_source: SpendTotals["cost_source"];
  calls: number;
  tokens: TokenFigures;
} {
  return {
    cost_usd: totals.cost_usd,
    cost_source: totals.cost_source,
    calls: totals.calls,
    tokens: { ...totals.tokens },
  };
}

/** A cost in a table cell: `$0.0400`, `~$0.0400` (estimated from tokens), or `no cost reported`. */
export function costCell(totals: Pick<SpendTotals, "cost_usd" | "cost_source">): string {
  if (totals.cost_usd === null) return "no cost reported";
  return `${totals.cost_source === "computed" || totals.cost_source === "mixed" ? "~" : ""}$${totals.cost_usd.toFixed(4)}`;
}

/** Tokens in a table cell, in tokensText's order: `4.0k/800/20.0k/1.2k, 26.0k` (in/out/cache read/cache write, total). */
export function tokensCell(tokens: TokenFigures): string {
  return `${[tokens.input, tokens.output, tokens.cache_read, tokens.cache_write].map(tokenCount).join("/")}, ${tokenCount(tokens.total)}`;
}
