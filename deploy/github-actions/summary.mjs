#!/usr/bin/env node
// The action's summary step: `ralph report RUN --format md` appended to $GITHUB_STEP_SUMMARY; where this
// ralph has no `report` command, a summary built from `ralph status RUN --json` instead.
import { spawnSync } from "node:child_process";
import { appendFileSync } from "node:fs";

const runId = (process.env.RUN_ID ?? "").trim();
const summaryFile = process.env.GITHUB_STEP_SUMMARY;
// ralph report writes to $GITHUB_STEP_SUMMARY itself when it is set: it is unset for the call, and its
// output appended here once.
const env = { ...process.env };
delete env.GITHUB_STEP_SUMMARY;

function markdown() {
  if (runId === "") return `## ralph did not start\n\n${fenced(process.env.LOOP_ERROR || "no run was created")}\n`;
  const report = spawnSync("ralph", ["report", runId, "--format", "md"], { env, encoding: "utf8" });
  if (report.status === 0 && report.stdout.trim() !== "")
    return report.stdout.endsWith("\n") ? report.stdout : `${report.stdout}\n`;
  const status = spawnSync("ralph", ["status", runId, "--json"], { env, encoding: "utf8" });
  if (status.status !== 0)
    return `## ralph run ${cell(runId)}\n\n${fenced(status.stderr.trim() || "ralph status failed")}\n`;
  return fromStatus(JSON.parse(status.stdout));
}

/** The summary from status --json: outcome, task, branch, iterations, spend, tokens, times, the last events. */
function fromStatus(run) {
  const rows = [
    ["outcome", `${run.exit_reason ?? run.state} (exit ${run.exit_code ?? "?"})`],
    ["task", run.current_task ?? ""],
    ["branch", run.branch ? `\`${run.branch}\`` : ""],
    ["iterations", `${run.iteration}${run.max_iterations ? ` of ${run.max_iterations}` : ""}`],
    [
      "cost",
      run.cost_usd === null || run.cost_usd === undefined
        ? "no cost reported"
        : `${run.cost_source === "computed" || run.cost_source === "mixed" ? "~" : ""}$${Number(run.cost_usd).toFixed(4)}`,
    ],
    // Tokens by kind, as ralph shows them everywhere (docs/spend.md): input excludes the cached input.
    [
      "tokens",
      run.tokens
        ? `in ${run.tokens.input} · out ${run.tokens.output} · cache read ${run.tokens.cache_read ?? 0} · cache write ${run.tokens.cache_write ?? 0} · total ${run.tokens.total ?? run.tokens.input + run.tokens.output}`
        : "",
    ],
    ["started", run.started_at ?? ""],
    ["ended", run.ended_at ?? ""],
    ["why", run.last_action ?? ""],
  ];
  const table = ["| | |", "|---|---|", ...rows.map(([name, value]) => `| ${name} | ${cell(String(value))} |`)].join(
    "\n",
  );
  const iterations = (run.recent_events ?? []).filter((event) => event.type === "iteration_ended");
  const lines = iterations.map(
    (event) =>
      `| ${event.iteration} | ${cell(String(event.result ?? ""))} | ${Math.round((event.duration_ms ?? 0) / 1000)} s | ${event.commit ? `\`${String(event.commit).slice(0, 12)}\`` : ""} |`,
  );
  const recent =
    lines.length === 0 ? "" : `\n\n| iteration | result | time | commit |\n|---|---|---|---|\n${lines.join("\n")}`;
  return `## ralph run ${cell(String(run.id))}: ${cell(String(run.exit_reason ?? run.state))}\n\n${table}${recent}\n\n_Built from \`ralph status --json\`: this ralph has no \`ralph report\`._\n`;
}

function cell(text) {
  return text
    .replace(/[\r\n]+/g, " ")
    .replace(/\|/g, "\\|")
    .replace(/[<>]/g, (c) => (c === "<" ? "&lt;" : "&gt;"));
}

function fenced(text) {
  return `\`\`\`\n${text.replace(/```/g, "'''")}\n\`\`\``;
}

const text = markdown();
if (summaryFile) appendFileSync(summaryFile, text);
else process.stdout.write(text);
