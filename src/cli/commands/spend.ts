// `ralph spend [--since DUR] [--by day|run|agent|model] [--json] [--all-projects]`: what the agents spent, from
// ralph's spend ledger (src/spend), for this project or every project of the user.
import { UsageError } from "../usage-error.js";
import { writeOut } from "../write-out.js";
import { spendReport, type SpendBy } from "../../spend/spend-report.js";
import { costCell, tokensCell } from "../../spend/spend-totals.js";
import { PRICES_AS_OF } from "../../spend/price-table.js";
import { spendDir } from "../../spend/spend-ledger.js";
import { visible } from "../../view/visible-text.js";

const BYS: readonly SpendBy[] = ["day", "run", "agent", "model"];
const UNITS: Record<string, number> = { m: 60_000, h: 3_600_000, d: 86_400_000, w: 7 * 86_400_000 };

/** `--since`: a period back from now such as 7d, 24h, 2w or 30m. */
export function parseSince(raw: string): number | null {
  const match = /^([0-9]+)([mhdw])$/.exec(raw.trim());
  if (!match?.[1] || !match[2]) return null;
  const ms = Number(match[1]) * (UNITS[match[2]] ?? 0);
  return Number.isSafeInteger(ms) && ms > 0 ? ms : null;
}

/** Runs `ralph spend`; `projectDir` is null outside a project (then only --all-projects works). */
export async function spendCommand(
  projectDir: string | null,
  opts: { since?: string; by?: string; json?: boolean; allProjects?: boolean },
  env: NodeJS.ProcessEnv,
): Promise<number> {
  const period = parseSince(opts.since ?? "7d");
  if (period === null)
    throw new UsageError(`--since ${opts.since ?? ""}: expected a period such as 7d, 24h, 2w or 30m`);
  const by = (opts.by ?? "day") as SpendBy;
  if (!BYS.includes(by)) throw new UsageError(`--by ${opts.by ?? ""}: expected one of ${BYS.join(", ")}`);
  if (!opts.allProjects && projectDir === null)
    throw new UsageError("not in a project (no ralph.yaml or .git here or above): give --all-projects");
  const now = new Date();
  const report = spendReport({
    projectDir: opts.allProjects ? null : projectDir,
    sinceMs: now.getTime() - period,
    by,
    now,
    env,
  });
  if (opts.json) {
    writeOut(`${JSON.stringify(report)}\n`);
    return 0;
  }
  const where = report.project === null ? "every project" : report.project;
  const lines = [`spend of ${where} since ${report.since} (from ${spendDir(env)})`];
  if (report.groups.length === 0) lines.push("nothing recorded in this period");
  else {
    const head = [
      by.toUpperCase(),
      ...(report.groups.some((group) => group.project) ? ["PROJECT"] : []),
      "CALLS",
      "COST",
      "TOKENS (IN/OUT/CACHE READ/CACHE WRITE, TOTAL)",
    ];
    const rows = report.groups.map((group) => [
      group.key,
      ...(group.project ? [group.project] : report.groups.some((other) => other.project) ? ["-"] : []),
      String(group.calls),
      costCell(group),
      tokensCell(group.tokens),
    ]);
    const total = [
      "total",
      ...(head.length === 6 ? [""] : []),
      String(report.total.calls),
      costCell(report.total),
      tokensCell(report.total.tokens),
    ];
    lines.push(...table([head, ...rows, total]));
  }
  const estimated = report.total.cost_source === "computed" || report.total.cost_source === "mixed";
  if (estimated) lines.push(`~: estimated from tokens at list prices of ${PRICES_AS_OF} (the agent reported no cost)`);
  writeOut(`${lines.map(visible).join("\n")}\n`);
  return 0;
}

function table(rows: string[][]): string[] {
  const widths = rows[0]?.map((_, column) => Math.max(...rows.map((row) => (row[column] ?? "").length))) ?? [];
  return rows.map((row) =>
    row.map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column] ?? 0))).join("  "),
  );
}
