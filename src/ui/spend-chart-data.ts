// The dashboard's spend chart: `ralph spend` for the dashboard's projects together, each group with the
// words the CLI would use for it (the page draws bars and shows these strings, never wording of its own).
import { spendReport, type SpendBy, type SpendGroup } from "../spend/spend-report.js";
import { costCell, sumCalls, tokensText } from "../spend/spend-totals.js";
import type { Project } from "./projects.js";

/** One bar: a day (or agent, model, run) with its figures and their words. */
export type ChartGroup = SpendGroup & { cost_text: string; tokens_text: string };

/** What `/api/spend` answers. */
export interface SpendChartData {
  by: SpendBy;
  since: string;
  groups: ChartGroup[];
  total: { cost_text: string; tokens_text: string };
}

/** The spend of the last `days` days of `projects`, by `by`. */
export function spendChartData(
  projects: readonly Project[],
  by: SpendBy,
  days: number,
  env: NodeJS.ProcessEnv,
  now: Date = new Date(),
): SpendChartData {
  const sinceMs = now.getTime() - days * 86_400_000;
  const merged = new Map<string, SpendGroup>();
  let since = new Date(sinceMs).toISOString();
  for (const project of projects) {
    const report = spendReport({ projectDir: project.dir, sinceMs, by, now, env });
    since = report.since;
    for (const group of report.groups) {
      const key = by === "run" ? `${project.key}/${group.key}` : group.key;
      const before = merged.get(key);
      merged.set(key, before ? add(before, group) : { ...group, key });
    }
  }
  const groups = [...merged.values()]
    .sort((a, b) => a.key.localeCompare(b.key))
    .map((group) => ({ ...group, cost_text: costCell(group), tokens_text: tokensText(group.tokens) }));
  const total = groups.reduce<SpendGroup | null>((sum, group) => (sum ? add(sum, group) : { ...group }), null);
  return {
    by,
    since,
    groups,
    total: total
      ? { cost_text: costCell(total), tokens_text: tokensText(total.tokens) }
      : { cost_text: costCell(sumCalls([])), tokens_text: tokensText(sumCalls([]).tokens) },
  };
}

function add(a: SpendGroup, b: SpendGroup): SpendGroup {
  const cost =
    a.cost_usd === null && b.cost_usd === null ? null : Math.round(((a.cost_usd ?? 0) + (b.cost_usd ?? 0)) * 1e6) / 1e6;
  const sources = new Set([a.cost_source, b.cost_source].filter((source) => source !== "none"));
  const source =
    sources.size === 0 ? "none" : sources.size === 1 ? ([...sources][0] as SpendGroup["cost_source"]) : "mixed";
  const t = (kind: keyof SpendGroup["tokens"]) => a.tokens[kind] + b.tokens[kind];
  return {
    ...a,
    calls: a.calls + b.calls,
    cost_usd: cost,
    cost_source: source,
    tokens: {
      input: t("input"),
      output: t("output"),
      cache_read: t("cache_read"),
      cache_write: t("cache_write"),
      total: t("total"),
    },
  };
}
