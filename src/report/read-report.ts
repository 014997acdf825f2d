// Reads what a report needs from the project: the run's record, its children's, and the diffstat of its branch.
import { runEnding, summariseRun } from "../control/list-runs.js";
import { isRunnerAlive } from "../control/runner-alive.js";
import { foreignTodo, foreignWhy } from "../control/foreign-run.js";
import { readEventFile } from "../store/read-events.js";
import { runPaths } from "../store/run-paths.js";
import { readStatusFile } from "../store/status-file.js";
import { runGit } from "../worktree/run-git.js";
import { buildReport, type Diffstat, type RunRecordRead } from "./build-report.js";
import type { RunReport } from "./report-schema.js";
import { callsOf } from "../spend/spend-of.js";

function readRecord(projectDir: string, id: string): RunRecordRead | null {
  const paths = runPaths(projectDir, id);
  const status = readStatusFile(paths.status);
  // Its spend comes from ralph's spend ledger, not from status.json or events.jsonl (in reach of its agent).
  return status ? { id, status, events: readEventFile(paths.events), calls: callsOf(projectDir, id) } : null;
}

/** `git diff --stat` of base..branch, or null without a branch (or when git cannot tell). */
async function diffstatOf(projectDir: string, base: string | null, branch: string | null): Promise<Diffstat | null> {
  if (!branch) return null;
  const tip = `refs/heads/${branch}`;
  let from = base;
  if (!from) {
    const merged = await runGit(projectDir, ["merge-base", "HEAD", tip]);
    if (!merged.ok) return null;
    from = merged.stdout.trim();
  }
  const [stat, numbers] = await Promise.all([
    runGit(projectDir, ["diff", "--stat=100", from, tip, "--"]),
    runGit(projectDir, ["diff", "--numstat", from, tip, "--"]),
  ]);
  if (!stat.ok || !numbers.ok) return null;
  let insertions = 0;
  let deletions = 0;
  const rows = numbers.stdout.split("\n").filter((line) => line !== "");
  for (const row of rows) {
    const [added, removed] = row.split("\t");
    insertions += Number(added) || 0;
    deletions += Number(removed) || 0;
  }
  return { files_changed: rows.length, insertions, deletions, text: stat.stdout };
}

/** The report of run `id`, or null when it has no readable status.json. */
export async function readReport(projectDir: string, id: string): Promise<RunReport | null> {
  const run = readRecord(projectDir, id);
  if (!run) return null;
  const childIds = run.events
    .filter((event) => event.type === "child_started" || event.type === "resolve_started")
    .map((event) => String(event.child));
  const children = childIds
    .map((child) => readRecord(projectDir, child))
    .filter((record): record is RunRecordRead => record !== null);
  const started = run.events.find((event) => event.type === "run_started" && typeof event.base === "string");
  const diffstat = await diffstatOf(
    projectDir,
    typeof started?.base === "string" ? started.base : (run.status.base ?? null),
    run.status.branch ?? null,
  );
  // The run's ending is the one `ralph status` shows: what its runner's records say, not status.json alone.
  const read = summariseRun(projectDir, id, isRunnerAlive, new Date());
  const ending = runEnding(read);
  const foreign =
    read.summary.state === "foreign"
      ? { foreign: `${foreignWhy()}; ${foreignTodo(runPaths(projectDir, id).dir)}` }
      : {};
  return { ...buildReport(run, children, diffstat), outcome: ending.reason, exit_code: ending.code, ...foreign };
}
