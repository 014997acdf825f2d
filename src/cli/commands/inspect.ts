// `ralph list`, `ralph status` and `ralph logs`: read-only views of a project's runs.
import { CHUNK_BYTES, completeEndSync, linesBackwardSync, openLogSync } from "../../store/file-lines.js";
import { isRunnerAlive } from "../../control/runner-alive.js";
import { listRuns, runEnding, summariseRun } from "../../control/list-runs.js";
import { runDirProblem, runPaths, type RunPaths } from "../../store/run-paths.js";
import { readSentinels } from "../../control/control-files.js";
import { UsageError } from "../usage-error.js";
import type { RunStatusReport, RunSummary } from "../../store/run-summary.js";
import { nextStep } from "../next-step.js";
import { closeSync } from "node:fs";
import { mebibytes } from "../../view/render-lines.js";
import { pickRunRecord } from "../pick-run.js";
import { visible } from "../../view/visible-text.js";
import { writeOut } from "../write-out.js";
import { letYoungGenerationGrow } from "../young-generation.js";
import { costCell, costText, tokensCell, tokensText } from "../../spend/spend-totals.js";
import { foreignTodo, foreignWhy } from "../../control/foreign-run.js";

/** `ralph list [--active] [--json]`. */
export async function listCommand(projectDir: string, activeOnly: boolean, json: boolean): Promise<number> {
  const problem = runDirProblem(projectDir);
  if (problem) throw new UsageError(problem);
  letYoungGenerationGrow();
  const runs = listRuns(projectDir, isRunnerAlive, new Date()).filter((run) => !activeOnly || run.active);
  if (json) {
    writeOut(`${JSON.stringify({ schema_version: 1, runs })}\n`);
    return 0;
  }
  if (runs.length === 0) {
    writeOut(activeOnly ? "no active runs\n" : "no runs in .ralph/runs\n");
    return 0;
  }
  // Children of a --parallel run are listed under their parent, indented; BRANCH and QUESTION only when a run has one.
  const withBranch = runs.some((run) => run.branch !== null);
  const asking = runs.some((run) => run.question !== null);
  const parents = new Set(runs.map((run) => run.parent));
  const rows = underParents(runs).map(({ run, depth }) => [
    `${"  ".repeat(depth)}${run.id}`,
    run.dry_run && run.state !== "DRY_RUN" ? `${run.state} (dry run)` : run.state,
    // A --parallel parent counts child runs, not iterations of its own (each child has its own cap).
    parents.has(run.id) ? `${run.iteration} run${run.iteration === 1 ? "" : "s"}` : iterationText(run),
    costCell(run),
    tokensCell(run.tokens),
    ageText(run.age_seconds),
    ...(withBranch ? [run.branch ?? "-"] : []),
    ...(asking ? [questionText(run.question)] : []),
  ]);
  const head = [
    "RUN",
    "STATE",
    "ITERATION",
    "SPEND",
    "TOKENS (IN/OUT/CACHE READ/CACHE WRITE, TOTAL)",
    "AGE",
    ...(withBranch ? ["BRANCH"] : []),
    ...(asking ? ["QUESTION"] : []),
  ];
  // Cells hold the agent's words (a question): control characters shown, never obeyed.
  const foreign = runs.filter((run) => run.state === "foreign").map((run) => run.id);
  const why =
    foreign.length > 0
      ? `${visible(`foreign: ${foreignWhy()}; ${foreignTodo(foreign.length === 1 ? `.ralph/runs/${foreign[0]}` : "its directory in .ralph/runs")}`)}\n`
      : "";
  // One write: a write that cannot finish at once is left to process.stdout, and a later one must not pass it.
  writeOut(`${table([head, ...rows.map((row) => row.map(visible))])}${why}`);
  return 0;
}

/** The status report of one run (RUN, the single active run, or the latest run). */
export async function statusReport(projectDir: string, given: string | undefined, now: Date): Promise<RunStatusReport> {
  const { id, record } = pickRunRecord(projectDir, given, "show", true);
  const paths = runPaths(projectDir, id);
  const read = record ?? summariseRun(projectDir, id, isRunnerAlive, now);
  const { summary, status } = read;
  const ending = runEnding(read);
  const started = status ? Date.parse(status.started_at) : Number.NaN;
  const endedAt = status?.ended_at ? Date.parse(status.ended_at) : now.getTime();
  return {
    ...summary,
    schema_version: 1,
    run_dir: paths.dir,
    session_id: status?.session_id ?? null,
    current_task: status?.current_task ?? null,
    elapsed_seconds: Number.isFinite(started) ? Math.max(0, Math.round((endedAt - started) / 1000)) : null,
    exit_reason: ending.reason,
    exit_code: ending.code,
    last_action: status?.last_action ?? null,
    resume_at: status?.resume_at ?? null,
    supervision:
      status?.supervision === "cgroup" || status?.supervision === "subreaper" || status?.supervision === "tree"
        ? status.supervision
        : null,
    resources: status?.resources ?? null,
    worktree: typeof status?.worktree === "string" ? status.worktree : null,
    review: status?.review ?? null,
    children: status?.parallel
      ? listRuns(projectDir, isRunnerAlive, now)
          .filter((run) => run.parent === id)
          .map(({ id, state, iteration, cost_usd, cost_source, branch }) => ({
            id,
            state,
            iteration,
            cost_usd,
            cost_source,
            branch,
          }))
      : [],
    recent_events: recentEvents(paths.events, 5),
  };
}

/** `ralph status [RUN] [--json]`. */
export async function statusCommand(projectDir: string, given: string | undefined, json: boolean): Promise<number> {
  letYoungGenerationGrow();
  const report = await statusReport(projectDir, given, new Date());
  if (json) {
    writeOut(`${JSON.stringify(report)}\n`);
    return 0;
  }
  const lines = [
    `run        ${report.id} (${report.run_dir})`,
    `state      ${stateText(report, runPaths(projectDir, report.id))}${report.exit_reason ? ` (exit code ${report.exit_code ?? "?"})` : ""}${report.dry_run ? ` · ${report.state === "DRY_RUN" ? "" : "dry run: "}the agent was never started` : ""}`,
    report.children.length > 0
      ? `children   ${report.iteration} child run${report.iteration === 1 ? "" : "s"} started (a --parallel parent: each child counts its own iterations)`
      : `iteration  ${iterationText(report)}`,
    `spend      ${costText(report)}${report.children.length > 0 ? " (the run and its child runs together)" : ""}`,
    `tokens     ${tokensText(report.tokens)}`,
    `task       ${report.current_task ?? "-"}`,
    ...(report.branch ? [`branch     ${report.branch} (worktree ${report.worktree ?? "?"})`] : []),
    ...(report.parent ? [`parent     ${report.parent}`] : []),
    ...report.children.map(
      (child, index) =>
        `${index === 0 ? "children  " : "          "} ${child.id}  ${child.state}  iteration ${child.iteration}  ${costCell(child)}  ${child.branch ?? "-"}`,
    ),
    `elapsed    ${ageText(report.elapsed_seconds)}`,
    `last       ${report.last_action ?? "-"}`,
    ...(report.resume_at ? [`resumes    ${report.resume_at}`] : []),
    ...(report.question !== null ? [`question   ${report.question}`] : []),
    ...(report.review
      ? [
          `review     iteration ${report.review.verdict === "none" ? `${report.review.iteration}: not approved` : `${report.review.iteration}: ${report.review.verdict}`}${report.review.detail ? ` (${report.review.detail})` : ""}`,
        ]
      : []),
    ...nextLine(report),
    ...(report.supervision
      ? [
          `supervised ${report.supervision}${report.resources ? ` (last iteration: cpu ${report.resources.cpu_seconds ?? "?"}s, peak memory ${report.resources.peak_memory_bytes === null ? "?" : mebibytes(report.resources.peak_memory_bytes)}, peak ${report.resources.peak_pids ?? "?"} processes)` : ""}`,
        ]
      : []),
    "recent events:",
    ...report.recent_events.map(
      (event) =>
        `  ${String(event.ts)} ${String(event.type)}${event.reason ? ` ${String(event.reason)}` : ""}${event.iteration ? ` #${String(event.iteration)}` : ""}`,
    ),
  ];
  writeOut(`${lines.map(visible).join("\n")}\n`);
  return 0;
}

/**
 * The state as a person reads it: a running run with a STOP or PAUSE request the runner has not acted on yet
 * still runs its current iteration, and says what it does at its end (the JSON keeps the state as it is). A
 * --parallel parent has no iteration of its own: it starts no new child, and its children go on as it says.
 */
function stateText(report: RunStatusReport, paths: RunPaths): string {
  if (report.state === "foreign") return `foreign: ${foreignWhy()}`;
  if (report.state !== "running") return report.state;
  const { stop, pause } = readSentinels(paths);
  const parent = report.children.length > 0;
  const boundary = `at the end of iteration ${report.iteration}`;
  if (stop)
    return parent
      ? "stopping: no new children; each child stops at its next boundary (ralph stop --now ends every child's agent at once)"
      : `stopping ${boundary} (ralph stop --now ends it at once)`;
  if (pause)
    return parent
      ? `pausing: no new child run starts; running children go on (ralph resume ${report.id} cancels it)`
      : `pausing ${boundary} (ralph resume ${report.id} cancels it)`;
  return report.state;
}

function nextLine(report: RunStatusReport): string[] {
  if (report.state === "foreign") return [`next       ${foreignTodo(report.run_dir)}`];
  const reason = report.exit_reason ?? (report.state === "stale" ? "INTERRUPTED" : null);
  if (report.state === "paused") return [`next       ralph resume ${report.id}`];
  if (report.question !== null)
    return [
      `next       ralph answer ${report.id} "YOUR ANSWER"${report.active ? "" : `, then ralph continue ${report.id}`}`,
    ];
  if (reason === null) return [];
  // The ending's detail is the last action: an agent that never started left nothing for ralph logs to show.
  const agentMissing = report.last_action?.startsWith("agent could not be started")
    ? (report.agent ?? "the agent")
    : undefined;
  const step = nextStep({
    reason,
    runId: report.id,
    iterations: report.iteration,
    maxIterations: report.max_iterations ?? 0,
    agentMissing,
    dryRun: report.dry_run,
    detail: report.last_action ?? undefined,
  });
  return step ? [`next       ${step}`] : [];
}

/** Bytes of events.jsonl read back from its end for the recent events, at most: a file of nothing but agent output costs no more. */
const RECENT_BUDGET = 16 * 1024 * 1024;

// Read synchronously: the event loop has nothing else to do meanwhile, and it spares the call Node's
// promise-based file module.
function recentEvents(file: string, count: number): Array<Record<string, unknown>> {
  const fd = openLogSync(file);
  if (fd === null) return [];
  const events: Array<Record<string, unknown>> = [];
  try {
    let read = 0;
    for (const lines of linesBackwardSync(fd, completeEndSync(fd))) {
      read += CHUNK_BYTES;
      for (const { text: line } of lines) {
        // Agent output is most of the file and says nothing about the run's state: not even parsed.
        if (line.includes('"type":"agent_event"')) continue;
        try {
          const event = JSON.parse(line) as Record<string, unknown>;
          if (event && typeof event === "object" && event.type !== "agent_event") events.push(event);
        } catch {
          // A line someone else wrote or cut short says nothing about the run's state.
        }
        if (events.length === count) break;
      }
      if (events.length >= count || read >= RECENT_BUDGET) break;
    }
  } finally {
    closeSync(fd);
  }
  return events.reverse();
}

/** Runs in list order with each --parallel child right after its parent (children whose parent is gone stay at the top level). */
function underParents<T extends Pick<RunSummary, "id" | "parent">>(
  runs: readonly T[],
): Array<{ run: T; depth: number }> {
  const ids = new Set(runs.map((run) => run.id));
  // Each run's children looked up, not searched for: a listing of 10,000 runs made 100 million comparisons.
  const children = new Map<string, T[]>();
  for (const run of runs) {
    if (run.parent === null || run.parent === run.id) continue;
    const siblings = children.get(run.parent);
    if (siblings) siblings.push(run);
    else children.set(run.parent, [run]);
  }
  const ordered: Array<{ run: T; depth: number }> = [];
  const visit = (run: T, depth: number) => {
    ordered.push({ run, depth });
    for (const child of children.get(run.id) ?? []) visit(child, depth + 1);
  };
  for (const run of runs) if (run.parent === null || !ids.has(run.parent) || run.parent === run.id) visit(run, 0);
  return ordered;
}

/** A question on one line, cut to fit a table. */
function questionText(question: string | null): string {
  if (question === null) return "-";
  const line = question.replace(/\s+/g, " ");
  return line.length > 60 ? `${line.slice(0, 59)}…` : line;
}

function iterationText(run: Pick<RunSummary, "iteration" | "max_iterations">): string {
  return `${run.iteration}/${run.max_iterations === 0 ? "∞" : (run.max_iterations ?? "?")}`;
}

function ageText(seconds: number | null): string {
  if (seconds === null) return "-";
  if (seconds < 120) return `${seconds}s`;
  if (seconds < 7200) return `${Math.round(seconds / 60)}m`;
  if (seconds < 172800) return `${Math.round(seconds / 3600)}h`;
  return `${Math.round(seconds / 86400)}d`;
}

function table(rows: string[][]): string {
  const widths = rows[0]?.map((_, column) => Math.max(...rows.map((row) => (row[column] ?? "").length))) ?? [];
  return (
    rows
      .map((row) =>
        row
          .map((cell, column) => cell.padEnd(widths[column] ?? 0))
          .join("  ")
          .trimEnd(),
      )
      .join("\n") + "\n"
  );
}
