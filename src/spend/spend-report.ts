// `ralph spend`: the ledger's calls of a period, summed by day, run, agent or model. The JSON is additive:
// the parts of one family run on many machines (a GitHub Actions matrix, a Kubernetes Job) add up key by key.
import { dayOf, projectKey, SpendReader } from "./spend-ledger.js";
import type { SpendCall } from "./spend-record.js";
import { spendJson, sumCalls } from "./spend-totals.js";

/** What `ralph spend` groups by. */
export type SpendBy = "day" | "run" | "agent" | "model";

/** One group of calls and what they spent. */
export type SpendGroup = { key: string; project?: string } & ReturnType<typeof spendJson>;

/** `ralph spend --json`. */
export interface SpendReport {
  schema_version: 1;
  /** The period: from `since` (ISO) to `until` (ISO). */
  since: string;
  until: string;
  by: SpendBy;
  /** The project the calls are of, or null with --all-projects. */
  project: string | null;
  groups: SpendGroup[];
  total: ReturnType<typeof spendJson>;
}

function keyOf(call: SpendCall, by: SpendBy): string {
  switch (by) {
    case "day":
      return call.at.slice(0, 10);
    case "run":
      return call.run;
    case "agent":
      return call.agent;
    case "model":
      return call.model ?? "unknown";
  }
}

/** The spend of the period from `sinceMs` to `now`, grouped; `projectDir` null: every project. */
export function spendReport(options: {
  projectDir: string | null;
  sinceMs: number;
  by: SpendBy;
  now: Date;
  env: NodeJS.ProcessEnv;
}): SpendReport {
  const { by, now, env } = options;
  const project = options.projectDir === null ? null : projectKey(options.projectDir);
  const since = new Date(options.sinceMs).toISOString();
  const until = now.toISOString();
  const calls = new SpendReader(env)
    .calls(dayOf(options.sinceMs), dayOf(now))
    .filter((call) => call.at >= since && call.at <= until && (project === null || call.project === project));
  const groups = new Map<string, { project?: string; calls: SpendCall[] }>();
  for (const call of calls) {
    // A run id is unique in its project only: across projects, a run is a project and an id.
    const key = keyOf(call, by);
    const id = by === "run" && project === null ? `${call.project}\0${key}` : key;
    const group = groups.get(id) ?? {
      ...(by === "run" && project === null ? { project: call.project } : {}),
      calls: [],
    };
    group.calls.push(call);
    groups.set(id, group);
  }
  const rows: SpendGroup[] = [...groups.entries()].map(([id, group]) => ({
    key: id.split("\0").pop() ?? id,
    ...(group.project ? { project: group.project } : {}),
    ...spendJson(sumCalls(group.calls)),
  }));
  rows.sort((a, b) =>
    by === "day"
      ? a.key.localeCompare(b.key)
      : (b.cost_usd ?? -1) - (a.cost_usd ?? -1) || b.tokens.total - a.tokens.total || a.key.localeCompare(b.key),
  );
  return { schema_version: 1, since, until, by, project, groups: rows, total: spendJson(sumCalls(calls)) };
}
