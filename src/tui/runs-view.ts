// The runs view: every run as one line (state, iteration/max, spend, tokens, age, open question, task or
// last event), a `--parallel` parent with its children folded under it, filtered by state and sorted by age
// or spend. A filter applies to each run: a parent is listed for a child that passes, and a child that does
// not pass is left out and counted on its parent's line. Pure: rows and choices in, styled lines out.
import type { RunRow } from "../ui/run-row.js";
import { tokenText } from "../view/render-lines.js";
import { span, type Span, type Style } from "./line-fit.js";

/** Which runs the view lists. */
export type RunFilter = "all" | "active" | "asking" | "ended";
/** The order of the top-level runs: newest first, or highest spend first. */
export type RunSort = "age" | "spend";

export const FILTERS: RunFilter[] = ["all", "active", "asking", "ended"];

/** One listed line: a run, and for a parent its children that pass the filter, whether they are folded away, and how many the filter left out. */
export interface ListedRun {
  row: RunRow;
  child: boolean;
  children: number;
  folded: boolean;
  /** A parent's children the filter leaves out (an active family's ended runs under "active"). */
  filtered: number;
  filter: RunFilter;
}

/** A row's key: its project's and its own id. */
export const rowKey = (row: { project: string; id: string }): string => `${row.project}/${row.id}`;

function passes(row: RunRow, filter: RunFilter): boolean {
  switch (filter) {
    case "all":
      return true;
    case "active":
      return row.active;
    case "asking":
      return row.question !== null || row.state === "needs_human";
    case "ended":
      return !row.active;
  }
}

function startOf(row: RunRow): number {
  const at = row.started_at ? Date.parse(row.started_at) : Number.NaN;
  return Number.isFinite(at) ? at : 0;
}

/** The runs to list, in order: each parent followed by its children that pass the filter (oldest first) unless folded. */
export function listRuns(rows: RunRow[], filter: RunFilter, sort: RunSort, folded: ReadonlySet<string>): ListedRun[] {
  const byKey = new Map(rows.map((row) => [rowKey(row), row]));
  const children = new Map<string, RunRow[]>();
  const top: RunRow[] = [];
  for (const row of rows) {
    const parentKey = row.parent === null ? null : `${row.project}/${row.parent}`;
    if (parentKey !== null && byKey.has(parentKey)) children.set(parentKey, [...(children.get(parentKey) ?? []), row]);
    else top.push(row);
  }
  const order = (a: RunRow, b: RunRow) =>
    (sort === "spend" ? (b.cost_usd ?? -1) - (a.cost_usd ?? -1) : 0) ||
    startOf(b) - startOf(a) ||
    (a.id < b.id ? 1 : a.id > b.id ? -1 : 0);
  const listed: ListedRun[] = [];
  for (const row of top.sort(order)) {
    const family = children.get(rowKey(row)) ?? [];
    const kids = family
      .filter((kid) => passes(kid, filter))
      .sort((a, b) => startOf(a) - startOf(b) || (a.id < b.id ? -1 : 1));
    if (!passes(row, filter) && kids.length === 0) continue;
    const isFolded = kids.length > 0 && folded.has(rowKey(row));
    listed.push({
      row,
      child: false,
      children: kids.length,
      folded: isFolded,
      filtered: family.length - kids.length,
      filter,
    });
    if (!isFolded)
      for (const kid of kids) listed.push({ row: kid, child: true, children: 0, folded: false, filtered: 0, filter });
  }
  return listed;
}

/** A duration in seconds as the list shows it: 42s, 3m, 2h, 4d. */
export function ageText(seconds: number | null): string {
  if (seconds === null) return "-";
  if (seconds < 60) return `${seconds}s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)}m`;
  if (seconds < 86_400) return `${Math.floor(seconds / 3600)}h`;
  return `${Math.floor(seconds / 86_400)}d`;
}

/** A run's state in the colour it is shown in. */
export function stateStyle(state: string): Style {
  if (state === "running" || state === "DONE" || state === "NO_WORK") return "done";
  if (state === "paused" || state === "waiting" || state === "needs_human") return "warn";
  if (state === "stale" || state === "foreign" || state === "STOPPED") return "dim";
  return "error";
}

/** "3/10", or "3/∞" with no cap. */
export function iterText(row: RunRow): string {
  return `${row.iteration}/${row.max_iterations === null || row.max_iterations === 0 ? "∞" : row.max_iterations}`;
}

/** Spend as the list shows it: `~` marks an estimate from tokens; a cost nobody reported is "no cost", never $0.0000. */
export function spendText(usd: number | null, source: string | null = null): string {
  if (usd === null) return "no cost";
  return `${source === "computed" || source === "mixed" ? "~" : ""}$${usd.toFixed(usd >= 100 ? 0 : usd >= 10 ? 2 : 4)}`;
}

const pad = (text: string, width: number): string =>
  text.length >= width ? `${text.slice(0, width - 1)} ` : text.padEnd(width);

/** Column widths for a screen `width` cells wide. */
function columns(width: number): { id: number; wide: boolean } {
  return { id: width >= 150 ? 30 : 22, wide: width >= 150 };
}

/** The column header line. */
export function headerLine(width: number): Span[] {
  const { id, wide } = columns(width);
  const text = `  ${pad("RUN", id)}${pad("STATE", 15)}${pad("ITER", 8)}${pad("SPEND", 9)}${pad("TOKENS", 8)}${pad("AGE", 5)}? ${wide ? `${pad("TASK", 40)}LAST EVENT` : "TASK / LAST EVENT"}`;
  return [span("bold", text)];
}

/** How a parent's line names its children a filter leaves out: `(2 ended)` under "active". */
const FILTERED_WORD: Record<RunFilter, string> = { all: "more", active: "ended", asking: "not asking", ended: "live" };

/** One listed run as a line; `now` gives its age. */
export function runLine(listed: ListedRun, selected: boolean, width: number, now: number): Span[] {
  const { row } = listed;
  const { id, wide } = columns(width);
  const fold = listed.child ? "  └ " : listed.children > 0 ? (listed.folded ? "▸ " : "▾ ") : "";
  const left = listed.filtered > 0 ? ` (${listed.filtered} ${FILTERED_WORD[listed.filter]})` : "";
  const name = pad(`${fold}${row.id}${listed.folded ? ` (+${listed.children})` : ""}${left}`, id);
  const age = row.started_at ? Math.max(0, Math.round((now - Date.parse(row.started_at)) / 1000)) : null;
  const what = row.task ?? "";
  const last = row.reason ?? "";
  const base: Style = selected ? "select" : "plain";
  return [
    span(base, selected ? "› " : "  "),
    span(base, name),
    span(selected ? "select" : stateStyle(row.state), pad(row.state, 15)),
    span(
      base,
      `${pad(iterText(row), 8)}${pad(spendText(row.cost_usd, row.cost_source), 9)}${pad(tokenText(row.tokens.total), 8)}${pad(ageText(age), 5)}`,
    ),
    span(selected ? "select" : "warn", row.question !== null ? "? " : "  "),
    span(base, wide ? `${pad(what, 40)}${last}` : what !== "" ? `${what} · ${last}` : last),
  ];
}
