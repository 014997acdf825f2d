// The check before every agent call of every run: the family's `--max-cost` and `--max-tokens` (a
// `--parallel` parent, its children and resolve runs together), then the project's and the user's daily and
// weekly budgets, all summed from the spend ledger. Only calls already under way when a budget is met can go
// past it: the check comes before each call starts, never during one.
import { dayOf, SpendReader } from "./spend-ledger.js";
import type { Budget, SpendCall, SpendRun, TokenCaps } from "./spend-record.js";
import { dollars, sumCalls } from "./spend-totals.js";

/** Go on (null), stop (BUDGET_EXCEEDED, naming the budget), or wait until a new day or week begins. */
export type GateVerdict =
  null | { kind: "exceeded"; detail: string } | { kind: "wait"; untilMs: number; detail: string };

const DAY_MS = 86_400_000;

/** Midnight UTC of the day of `ms`. */
function dayStart(ms: number): number {
  return Math.floor(ms / DAY_MS) * DAY_MS;
}

/** Monday 00:00 UTC of the week of `ms`. */
export function weekStart(ms: number): number {
  const day = dayStart(ms);
  const weekday = (new Date(day).getUTCDay() + 6) % 7; // Monday 0 … Sunday 6
  return day - weekday * DAY_MS;
}

/** The first day the checks of `run` read calls from. */
export function gateFromDay(run: SpendRun, nowMs: number): string {
  const family = dayOf(run.family_since);
  const week = dayOf(weekStart(nowMs));
  return family < week ? family : week;
}

const usd = (value: number): string => `$${value.toFixed(4)}`;

/** The kinds of tokens over their cap, in words, or null. */
function tokensOver(caps: TokenCaps, calls: SpendCall[]): string | null {
  const t = sumCalls(calls).tokens;
  for (const kind of ["total", "input", "output", "cache_read", "cache_write"] as const) {
    const cap = caps[kind];
    if (cap !== undefined && t[kind] >= cap)
      return `${t[kind]} ${kind.replace("_", " ")} tokens used, --max-tokens ${kind === "total" ? "" : `${kind}=`}${cap}`;
  }
  return null;
}

function budgetOver(
  budget: Budget | null,
  whose: string,
  where: string,
  today: SpendCall[],
  week: SpendCall[],
  nowMs: number,
): GateVerdict {
  if (!budget) return null;
  const checks = [
    {
      cap: budget.daily_usd,
      spent: dollars(sumCalls(today)),
      name: "daily",
      period: "today (UTC)",
      untilMs: dayStart(nowMs) + DAY_MS,
    },
    {
      cap: budget.weekly_usd,
      spent: dollars(sumCalls(week)),
      name: "weekly",
      period: "this week (from Monday, UTC)",
      untilMs: weekStart(nowMs) + 7 * DAY_MS,
    },
  ];
  for (const check of checks) {
    if (check.cap === null || check.spent < check.cap) continue;
    const detail = `${whose} ${check.name} budget is spent: ${usd(check.spent)} ${check.period}, budget.${check.name} $${check.cap} in ${where}`;
    return budget.on_exhausted === "wait"
      ? { kind: "wait", untilMs: check.untilMs, detail }
      : { kind: "exceeded", detail };
  }
  return null;
}

/** The verdict for `run` at `nowMs`, from `calls` (every call of the ledger from gateFromDay on). */
export function checkBudgets(run: SpendRun, calls: readonly SpendCall[], nowMs: number): GateVerdict {
  const family = calls.filter(
    (call) => call.project === run.project && call.family === run.family && call.at >= run.family_since,
  );
  if (run.family_max_cost_usd !== null) {
    const spent = dollars(sumCalls(family));
    if (spent >= run.family_max_cost_usd) {
      const whose =
        run.parent === null && run.family === run.run
          ? `spent ${usd(spent)}`
          : `run ${run.family} and its child runs together spent ${usd(spent)}`;
      return { kind: "exceeded", detail: `${whose}, --max-cost $${run.family_max_cost_usd} of run ${run.family}` };
    }
  }
  if (run.family_max_tokens) {
    const over = tokensOver(run.family_max_tokens, family);
    if (over)
      return {
        kind: "exceeded",
        detail: run.family === run.run ? over : `run ${run.family} and its child runs together: ${over}`,
      };
  }
  const today = dayOf(nowMs);
  const week = weekStart(nowMs);
  const inWeek = calls.filter((call) => Date.parse(call.at) >= week);
  const inDay = inWeek.filter((call) => call.at.slice(0, 10) === today);
  const mine = (list: SpendCall[]) => list.filter((call) => call.project === run.project);
  return (
    budgetOver(run.project_budget, "the project's", "ralph.yaml", mine(inDay), mine(inWeek), nowMs) ??
    budgetOver(run.user_budget, "your", "the user config (every project)", inDay, inWeek, nowMs)
  );
}

/** The checks of one run, reading the ledger as it grows. */
export class SpendGate {
  private readonly reader: SpendReader;

  constructor(
    readonly run: SpendRun,
    env: NodeJS.ProcessEnv,
  ) {
    this.reader = new SpendReader(env);
  }

  /** The verdict before the next call starts. */
  check(nowMs: number): GateVerdict {
    return checkBudgets(this.run, this.reader.calls(gateFromDay(this.run, nowMs), dayOf(nowMs)), nowMs);
  }

  /** What the run itself has spent so far, in dollars. */
  spentByRun(nowMs: number): number {
    return dollars(
      sumCalls(
        this.reader
          .calls(dayOf(this.run.family_since), dayOf(nowMs))
          .filter((call) => call.project === this.run.project && call.run === this.run.run),
      ),
    );
  }
}
