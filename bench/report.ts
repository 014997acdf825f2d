// The benchmark's one table: each figure with its median, min and max, its same-run baseline, and its target.
import { cpus, release, totalmem, type as osType } from "node:os";
import { formatNumber, type Summary } from "./stats.js";

/** One figure of the table. */
export interface Row {
  group: string;
  figure: string;
  unit: string;
  /** null when the figure could not be measured here (see note). */
  value: Summary | null;
  /** The same-run comparison, e.g. the per-pid SIGKILL floor. */
  baseline?: { label: string; value: Summary };
  /** The target, in words, e.g. "< 200 ms". */
  target?: string;
  /** Whether the median meets the target (null: no target, or not measured). */
  met?: boolean | null;
  note?: string;
  /** What was run, so anyone can rerun it. */
  command: string;
}

/** The machine the numbers were taken on. */
export interface Machine {
  cpu: string;
  cores: number;
  memoryGb: number;
  os: string;
  node: string;
}

/** Describes this machine. */
export function describeMachine(): Machine {
  const cpu = cpus()[0]?.model.replace(/\s+/g, " ").trim() ?? "unknown";
  return {
    cpu,
    cores: cpus().length,
    memoryGb: Math.round(totalmem() / 2 ** 30),
    os: `${osType()} ${release()}`,
    node: process.version,
  };
}

function ratio(row: Row): string {
  if (!row.value || !row.baseline || row.baseline.value.median === 0) return "";
  return `${formatNumber(row.value.median / row.baseline.value.median)}×`;
}

function verdict(row: Row): string {
  if (row.met === true) return "met";
  if (row.met === false) return "MISSED";
  return "";
}

function cells(row: Row): string[] {
  const v = row.value;
  return [
    row.figure,
    v ? `${formatNumber(v.median)} ${row.unit}` : "n/a",
    v ? `${formatNumber(v.min)}–${formatNumber(v.max)}` : "",
    row.baseline
      ? `${row.baseline.label} ${formatNumber(row.baseline.value.median)} (${formatNumber(row.baseline.value.min)}–${formatNumber(row.baseline.value.max)})`
      : "",
    ratio(row),
    row.target ?? "",
    verdict(row),
    row.note ?? "",
  ];
}

const HEADER = ["figure", "median", "min–max", "baseline (same run)", "ratio", "target", "", "note"];

/** The table as aligned plain text, one block per group. */
export function textTable(rows: Row[]): string {
  const body = rows.map(cells);
  const widths = HEADER.map((title, column) =>
    Math.max(title.length, ...body.map((row) => (row[column] ?? "").length)),
  );
  const line = (row: string[]) =>
    row
      .map((cell, column) => cell.padEnd(widths[column] ?? 0))
      .join("  ")
      .trimEnd();
  const out = [line(HEADER)];
  let group = "";
  rows.forEach((row, index) => {
    if (row.group !== group) {
      group = row.group;
      out.push(`-- ${group}`);
    }
    out.push(line(body[index] ?? []));
  });
  return `${out.join("\n")}\n`;
}

/** The table as Markdown (for the README): one heading row per group, each figure with its command. */
export function markdownTable(rows: Row[]): string {
  const escape = (text: string) => text.replace(/\|/g, "\\|");
  const out = [
    "| figure | median (min–max) | baseline, same run (ratio) | target | note | command |",
    "|---|---|---|---|---|---|",
  ];
  let group = "";
  for (const row of rows) {
    if (row.group !== group) {
      group = row.group;
      out.push(`| **${escape(group)}** | | | | | |`);
    }
    const [figure, median, range, baseline, times, target, met, note] = cells(row).map(escape);
    const value = row.value ? `${median} (${range})` : median;
    const compared = baseline ? `${baseline}${times ? `; ${times}` : ""}` : "";
    const aim = target ? `${target}: ${met === "MISSED" ? "**missed**" : met}` : "";
    out.push(`| ${figure} | ${value} | ${compared} | ${aim} | ${note} | \`${escape(row.command)}\` |`);
  }
  return `${out.join("\n")}\n`;
}

/** What bench/results.json holds. */
export interface Results {
  date: string;
  machine: Machine;
  runs: number;
  durationSeconds: number;
  rows: Row[];
}
