// The run view: a run's header, its iterations (outcome, duration, cost, checks, review verdict, commit) and
// one scrollable pane (the agent's output as `--live` shows it, the run log, or the report). Pure.
import type { RunRow } from "../ui/run-row.js";
import { tokenText } from "../view/render-lines.js";
import { span, type Span } from "./line-fit.js";
import type { IterationRow } from "./run-detail.js";
import { ageText, iterText, spendText, stateStyle } from "./runs-view.js";

/** What the pane shows. */
export type Pane = "output" | "log" | "report";

/** The pane's lines and where the view is in them. */
export interface PaneLines {
  pane: Pane;
  /** How many lines the pane holds, and those from `from` to `to` (only the shown ones are made). */
  total: number;
  slice(from: number, to: number): Span[][];
  /** Lines scrolled up from the end (0: following the end). */
  fromEnd: number;
  /** Whether more lines are before the first one held. */
  earlier: boolean;
  /** Whether the pane's file is still being read for the first time. */
  reading?: boolean;
}

/** The run's header: id, state, iteration, spend, tokens, age, task. */
export function runHeader(row: RunRow, now: number): Span[][] {
  const age = row.started_at ? Math.max(0, Math.round((now - Date.parse(row.started_at)) / 1000)) : null;
  return [
    [
      span("bold", `run ${row.id}  `),
      span(stateStyle(row.state), row.state),
      span(
        "plain",
        `  iter ${iterText(row)}  ${spendText(row.cost_usd, row.cost_source)}  ${tokenText(row.tokens.total)} tokens  age ${ageText(age)}${row.agent ? `  agent ${row.agent}` : ""}${row.branch ? `  branch ${row.branch}` : ""}`,
      ),
    ],
    [span("dim", `task: ${row.task ?? "-"}  ·  last: ${row.reason ?? "-"}`)],
  ];
}

const pad = (text: string, width: number): string =>
  text.length >= width ? `${text.slice(0, width - 1)} ` : text.padEnd(width);

/** The iteration list's lines: its header and the newest `room - 1` iterations. */
export function iterationLines(iterations: IterationRow[], room: number, reading = false): Span[][] {
  const head: Span[] = [
    span(
      "bold",
      `${pad("  #", 6)}${pad("RESULT", 10)}${pad("TIME", 8)}${pad("COST", 9)}${pad("CHECKS", 9)}${pad("REVIEW", 9)}${pad("COMMIT", 10)}TASK`,
    ),
  ];
  if (iterations.length === 0)
    return [head, [span("dim", reading ? "  reading the run's events…" : "  no iteration yet")]];
  const shown = iterations.slice(-Math.max(1, room - 1));
  return [
    head,
    ...shown.map((it): Span[] => {
      const checks =
        it.checks.passed + it.checks.failed === 0
          ? "-"
          : it.checks.failed > 0
            ? `${it.checks.failed} fail`
            : `${it.checks.passed} ok`;
      const tone =
        it.result === "done" || it.result === "progress"
          ? "done"
          : it.result === "running"
            ? "plain"
            : it.result === "failed" || it.result === "timeout"
              ? "error"
              : "warn";
      return [
        span("plain", pad(`  ${it.iteration}`, 6)),
        span(tone, pad(it.result, 10)),
        span(
          "plain",
          `${pad(it.durationMs === null ? "-" : `${(it.durationMs / 1000).toFixed(1)}s`, 8)}${pad(it.costUsd === null ? "-" : spendText(it.costUsd), 9)}`,
        ),
        span(it.checks.failed > 0 ? "error" : "plain", pad(checks, 9)),
        span(it.review === "approve" ? "done" : it.review === null ? "plain" : "warn", pad(it.review ?? "-", 9)),
        span("plain", `${pad(it.commit ?? "-", 10)}${it.task ?? ""}`),
      ];
    }),
  ];
}

/** The pane's title line and its `room - 1` visible lines (the end, or as far up as scrolled). */
export function paneLines(view: PaneLines, room: number): Span[][] {
  const body = Math.max(1, room - 1);
  const total = view.total;
  const last = Math.max(0, total - view.fromEnd);
  const first = Math.max(0, last - body);
  const where = view.reading
    ? "reading…"
    : total === 0
      ? "empty"
      : `lines ${first + 1}-${last} of ${total}${view.earlier ? "+" : ""}${view.fromEnd === 0 ? " · following" : ""}`;
  const names: Record<Pane, string> = { output: "agent output", log: "run log", report: "report" };
  const title: Span[] = [
    span("bold", `── ${names[view.pane]} ── ${where} ── l: output/log · o: report · pgup/pgdn/home/end ──`),
  ];
  const shown = view.slice(first, last);
  while (shown.length < body) shown.push([]);
  return [title, ...shown];
}
