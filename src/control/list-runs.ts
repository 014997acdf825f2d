// Lists a project's runs, reading only status.json and the end of progress.txt of each.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { RunnerAlive } from "./lock-file.js";
import { ledgerReader, readLedgerEntry, type ListedEntry } from "./ledger-entry.js";
import { readCompletion } from "../store/progress-log.js";
import { runPaths, runsDir } from "../store/run-paths.js";
import type { RunSummary } from "../store/run-summary.js";
import { isExitReason, type ExitReason } from "../exit/exit-reasons.js";
import { readStatusFile, type RunStatus } from "../store/status-file.js";
import { spendLister, spendOf } from "../spend/spend-of.js";
import { spendJson, type SpendTotals } from "../spend/spend-totals.js";

/** The ids of every run directory of a project, in name order. */
export function runIds(projectDir: string): string[] {
  try {
    return (
      readdirSync(runsDir(projectDir), { withFileTypes: true })
        // Names starting with a dot are run directories still being built (create-run-dir.ts), never runs.
        .filter((entry) => entry.isDirectory() && !entry.name.startsWith("."))
        .map((entry) => entry.name)
        .sort()
    );
  } catch {
    return [];
  }
}

/**
 * The in-session loop that is still armed: the run the project's Claude Code loop file names while it
 * says `active: true`. A hook run has no runner process to check, and a closed session never says so.
 */
export function armedHookRun(projectDir: string): string | null {
  let text: string;
  try {
    text = readFileSync(join(projectDir, ".claude", "ralph-loop.local.md"), "utf8");
  } catch {
    return null;
  }
  const frontMatter = /^---\r?\n([\s\S]*?)\r?\n---/.exec(text)?.[1] ?? "";
  const runId = /^run_id:[ \t]*["']?([^"'\s]+)["']?[ \t]*$/m.exec(frontMatter)?.[1];
  return runId !== undefined && /^active:[ \t]*true[ \t]*$/m.test(frontMatter) ? runId : null;
}

/**
 * One run's summary and the status it was read from; `armed` is armedHookRun's answer when already known,
 * `ledger` a reader of many runs' records (ledgerReader) and `spend` of many runs' spend (spendLister) when
 * listing.
 */
export function summariseRun(
  projectDir: string,
  id: string,
  alive: RunnerAlive,
  now: Date,
  armed?: string | null,
  ledger?: (id: string) => ListedEntry | null,
  spend?: (id: string) => SpendTotals,
): { summary: RunSummary; status: RunStatus | null } {
  const paths = runPaths(projectDir, id);
  const read = (entryOf: () => ListedEntry | null) => {
    const status = readStatusFile(paths.status);
    const entry = entryOf();
    return {
      status,
      entry,
      state: runState(
        status,
        entry,
        alive,
        () => readCompletion(paths.progress),
        () => (armed === undefined ? armedHookRun(projectDir) : armed) === id,
      ),
    };
  };
  const first = read(() => (ledger ? ledger(id) : readLedgerEntry(paths.dir)));
  // The record named a runner that is gone now: it may have ended the run normally after the files were read
  // (its last steps: the final status.json, then its record let go). Now that it is gone, nothing of it
  // writes any more, so a second read (of the record itself, not of a listing's copy) sees how it left the run.
  const runner = first.entry?.runner;
  const { status, state } =
    runner && first.status?.mode !== "hook" && !alive(runner) ? read(() => readLedgerEntry(paths.dir)) : first;
  const started = status ? Date.parse(status.started_at) : Number.NaN;
  const spent = spendJson(spend ? spend(id) : spendOf(projectDir, id, process.env, now));
  return {
    status,
    summary: {
      id,
      state,
      active: state === "running" || state === "paused" || state === "waiting" || state === "needs_human",
      mode: status?.mode ?? null,
      agent: status?.agent ?? null,
      iteration: status?.iteration ?? 0,
      max_iterations: status?.max_iterations ?? null,
      ...spent,
      started_at: status?.started_at ?? null,
      updated_at: status?.updated_at ?? null,
      ended_at: status?.ended_at ?? null,
      age_seconds: Number.isFinite(started) ? Math.max(0, Math.round((now.getTime() - started) / 1000)) : null,
      pid: status?.pid ?? null,
      branch: typeof status?.branch === "string" ? status.branch : null,
      parent: typeof status?.parent === "string" ? status.parent : null,
      question: openQuestion(status),
      dry_run: status?.dry_run === true,
    },
  };
}

/** The run's open question: asked and not yet answered (an ended or crashed run keeps it for `ralph continue`). */
export function openQuestion(status: RunStatus | null): string | null {
  return typeof status?.question === "string" && status.question !== "" && !status.answer ? status.question : null;
}

/**
 * A run's state. The runner's own records decide it: a run directory ralph has no record of is foreign;
 * a live runner (the record's pid and start time) drives the run whatever the run directory says, since an
 * agent can delete or rewrite status.json, the locks and progress.txt: while it lives the run is live (even
 * as it finishes), however ended status.json says it is. A runner that died with the record still naming
 * it never ended the run, whatever the files say (its agent may have written them, then killed it): the run
 * is INTERRUPTED once progress.txt has a completion marker (the guardian's, or a forced-out runner's), else
 * stale. Only a run its runner left (the record names none) takes its ending from status.json or the marker.
 */
function runState(
  status: RunStatus | null,
  entry: ListedEntry | null,
  alive: RunnerAlive,
  completion: () => { ended: boolean; reason: string | null },
  armed: () => boolean,
): RunSummary["state"] {
  if (entry === null) return "foreign";
  const endedReason =
    status?.state === "ended" && status.exit_reason && isExitReason(status.exit_reason) ? status.exit_reason : null;
  const runner = entry.runner;
  if (status?.mode === "hook") {
    if (endedReason) return endedReason;
    if (armed()) return "running";
  } else if (runner && alive(runner)) {
    return status?.state === "paused" || status?.state === "waiting" || status?.state === "needs_human"
      ? status.state
      : "running";
  } else if (runner) {
    return completion().ended ? "INTERRUPTED" : "stale";
  } else if (endedReason) return endedReason;
  const ended = completion();
  if (ended.ended) return ended.reason && isExitReason(ended.reason) ? ended.reason : "FAILED";
  return "stale";
}

/** Every run of a project, by start time (status.json `started_at`), oldest first; the id breaks ties. */
export function listRuns(projectDir: string, alive: RunnerAlive, now: Date): RunSummary[] {
  // Each status.json let go as soon as it is summarised: a listing of 10,000 runs keeps only the summaries.
  return sortByStart(recordsOf(projectDir, alive, now, (record) => ({ summary: record.summary }))).map(
    (record) => record.summary,
  );
}

/** One run as listing read it: its summary and the status.json it came from. */
export type RunRecord = ReturnType<typeof summariseRun>;

/**
 * A run's ending as `ralph status` and `ralph report` show it: its state's (never status.json's own word,
 * which the agent may have written), with status.json's exit code only where its reason agrees.
 */
export function runEnding({ summary, status }: RunRecord): { reason: ExitReason | null; code: number | null } {
  const reason =
    summary.state !== "foreign" && summary.state !== "stale" && !summary.active && isExitReason(summary.state)
      ? summary.state
      : null;
  return { reason, code: reason !== null && status?.exit_reason === reason ? (status.exit_code ?? null) : null };
}

/** listRuns, each summary with the status it was read from. */
export function listRunRecords(projectDir: string, alive: RunnerAlive, now: Date): RunRecord[] {
  return sortByStart(recordsOf(projectDir, alive, now, (record) => record));
}

/** Every run of a project, summarised, each record kept as `keep` makes it. */
function recordsOf<T>(projectDir: string, alive: RunnerAlive, now: Date, keep: (record: RunRecord) => T): T[] {
  const armed = armedHookRun(projectDir);
  const ids = runIds(projectDir);
  const ledger = ledgerReader(runsDir(projectDir), ids.length, process.env, now.getTime());
  const spend = spendLister(projectDir, ids, process.env, now);
  const records = ids.map((id) =>
    keep(summariseRun(projectDir, id, alive, now, armed, (id) => ledger.entry(id), spend)),
  );
  ledger.save();
  return records;
}

/** Runs ordered by start time, oldest first; a run whose start is unknown sorts first, then by id. */
function sortByStart<T extends { summary: { id: string; started_at: string | null } }>(runs: T[]): T[] {
  const started = (run: T) => (run.summary.started_at ? Date.parse(run.summary.started_at) : Number.NaN);
  return [...runs].sort((a, b) => {
    const [x, y] = [started(a), started(b)];
    if (Number.isFinite(x) && Number.isFinite(y) && x !== y) return x - y;
    if (Number.isFinite(x) !== Number.isFinite(y)) return Number.isFinite(x) ? 1 : -1;
    return a.summary.id < b.summary.id ? -1 : a.summary.id > b.summary.id ? 1 : 0;
  });
}
