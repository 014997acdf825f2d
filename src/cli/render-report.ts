// A run's report as Markdown: for a pull request body, a CI step summary, or a person reading it in a terminal.
import type { ReportIteration, RunReport } from "../report/report-schema.js";
import { visibleLine } from "../view/visible-text.js";
import { costCell, costText, tokensText } from "../spend/spend-totals.js";

/** Markdown table cell text: one line, pipes escaped. */
function cell(text: string): string {
  return text.replace(/\r?\n/g, " ").replace(/\|/g, "\\|");
}

/** Inline code the text cannot close (more backticks around it than in any run inside), on one line, controls shown. */
function inlineCode(text: string): string {
  const shown = visibleLine(text);
  const ticks = "`".repeat(Math.max(0, ...(shown.match(/`+/g) ?? []).map((run) => run.length)) + 1);
  const pad = shown.startsWith("`") || shown.endsWith("`") ? " " : "";
  return `${ticks}${pad}${shown}${pad}${ticks}`;
}

function usd(value: number | null): string {
  return value === null ? "–" : `$${value.toFixed(4)}`;
}

function seconds(ms: number | null): string {
  return ms === null ? "–" : `${(ms / 1000).toFixed(1)}s`;
}

function verdicts(list: ReportIteration["checks"]): string {
  return list.length === 0
    ? "–"
    : list.map((check) => `${check.passed ? "pass" : "FAIL"} \`${cell(check.check)}\``).join("<br>");
}

function iterationTable(iterations: ReportIteration[]): string[] {
  if (iterations.length === 0) return ["No iterations."];
  const reviews = iterations.some((iteration) => iteration.reviews.length > 0);
  const lines = [
    `| # | Result | Duration | Cost | Checks |${reviews ? " Review |" : ""} Commit |`,
    `|---|---|---|---|---|${reviews ? "---|" : ""}---|`,
  ];
  for (const it of iterations) {
    const review = reviews ? ` ${verdicts(it.reviews)} |` : "";
    lines.push(
      `| ${it.iteration} | ${it.result ?? "–"} | ${seconds(it.duration_ms)} | ${usd(it.cost_usd)} | ${verdicts(it.checks)} |${review} ${it.commit ? `\`${it.commit.slice(0, 12)}\`` : "–"} |`,
    );
  }
  return lines;
}

/** The report in Markdown. */
export function renderReportMarkdown(report: RunReport): string {
  // A foreign run's files say what they say, and nothing vouches for them: its title says it is foreign, not "not ended".
  const title =
    report.foreign !== undefined
      ? "foreign"
      : (report.outcome ?? (report.ended_at ? "ending not recorded by its runner" : "not ended"));
  const lines = [
    `# ralph run ${report.run}: ${title}`,
    "",
    ...(report.foreign !== undefined ? [`Foreign: ${cell(report.foreign)}.`, ""] : []),
    cell(report.reason),
    "",
  ];
  const ended =
    report.ended_at === null
      ? "–"
      : `${report.ended_at}${report.foreign !== undefined ? " (as its own status.json says)" : ""}`;
  // The cost as every view words it: "no cost reported" (never $0.0000) when no call had one, "~" for an estimate.
  lines.push(
    "| | |",
    "|---|---|",
    `| Agent | ${report.agent} |`,
    `| Started | ${report.started_at} |`,
    `| Ended | ${ended} |`,
    `| Cost | ${cell(costText(report))} |`,
    `| Tokens | ${tokensText(report.tokens)} |`,
  );
  if (report.branch) {
    const from = report.base
      ? ` from ${report.base_branch ? `\`${report.base_branch}\` ` : ""}(\`${report.base.slice(0, 12)}\`)`
      : "";
    lines.push(`| Branch | \`${report.branch}\`${from} |`);
  }
  lines.push("");
  if (report.diffstat) {
    const { files_changed, insertions, deletions } = report.diffstat;
    lines.push(
      "## Changes",
      "",
      `${files_changed} file(s) changed, ${insertions} insertion(s), ${deletions} deletion(s)`,
      "",
      "```",
      report.diffstat.text.trimEnd(),
      "```",
      "",
    );
  }
  const planted = report.iterations.filter((iteration) => iteration.planted.length > 0);
  if (planted.length > 0) {
    lines.push(
      "## Planted by the agent (sandbox_tamper)",
      "",
      "Moved out of the work tree and not committed: each would have made git run or follow it later.",
      "",
    );
    for (const iteration of planted)
      lines.push(`- iteration ${iteration.iteration}: ${iteration.planted.map(inlineCode).join(", ")}`);
    lines.push("");
  }
  if (report.children.length > 0) {
    lines.push(
      "## Child runs",
      "",
      "| Run | Task | Outcome | Branch | Merge | Resolves | Cost |",
      "|---|---|---|---|---|---|---|",
    );
    for (const child of report.children) {
      const merge =
        child.merge === null
          ? "–"
          : child.merge === "merged"
            ? `merged \`${(child.merge_detail ?? "").slice(0, 12)}\``
            : child.merge === "abandoned"
              ? `abandoned: ${cell(child.merge_detail ?? "")}`
              : "pending";
      lines.push(
        `| ${child.run} | ${cell(child.task)} | ${child.outcome} | \`${child.branch}\` | ${merge} | ${child.resolves} | ${costCell(child)} |`,
      );
    }
    lines.push("");
    for (const child of report.children)
      if (child.iterations.length > 0)
        lines.push(`### ${child.run}: ${cell(child.detail)}`, "", ...iterationTable(child.iterations), "");
  }
  if (report.iterations.length > 0 || report.children.length === 0)
    lines.push("## Iterations", "", ...iterationTable(report.iterations), "");
  lines.push("## Open questions", "");
  if (report.open_questions.length === 0) lines.push("None.");
  for (const open of report.open_questions)
    lines.push(`- ${open.run}: ${cell(open.question)} (answer with \`ralph answer ${open.run} TEXT\`)`);
  return `${lines.join("\n")}\n`;
}
