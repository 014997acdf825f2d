// What a run spent, as every view shows it (status, list, report, the dashboard): summed from the spend
// ledger, never from the run's status.json or events.jsonl, which its agent can write. A run's figure holds
// its own calls, and its children's and resolve runs' when it is a `--parallel` parent (a family's first run).
import { dirname, join } from "node:path";
import { dirCache, listedIn } from "../store/dir-cache.js";
import { sha256Hex } from "../util/sha256.js";
import { sha256ForMany } from "../util/sha256-many.js";
import { dayOf, projectKey, readRun, readRunFile, runFileName, SpendReader, spendDir } from "./spend-ledger.js";
import type { SpendCall, SpendRun } from "./spend-record.js";
import { CallSum, noSpend, sumCalls, type SpendTotals } from "./spend-totals.js";

/** One reader per ledger directory for the whole process: a view of many runs reads each day once. */
const readers = new Map<string, SpendReader>();

function readerFor(env: NodeJS.ProcessEnv): SpendReader {
  const dir = spendDir(env);
  let reader = readers.get(dir);
  if (!reader) {
    reader = new SpendReader(env);
    readers.set(dir, reader);
  }
  return reader;
}

/** The ledger's calls of run `runId` of the project in `projectDir` (its family's too when it leads one), oldest first. */
export function callsOf(
  projectDir: string,
  runId: string,
  env: NodeJS.ProcessEnv = process.env,
  now: Date = new Date(),
): SpendCall[] {
  const project = projectKey(projectDir);
  const run = readRun(project, runId, env);
  if (!run) return [];
  const from = dayOf(firstDay(run));
  return readerFor(env)
    .calls(from, dayOf(now))
    .filter(
      (call) => call.project === project && (call.run === runId || (call.family === runId && call.run !== runId)),
    );
}

/** What run `runId` spent (nothing when the ledger does not know it: a run from before the ledger, a foreign one). */
export function spendOf(
  projectDir: string,
  runId: string,
  env: NodeJS.ProcessEnv = process.env,
  now: Date = new Date(),
): SpendTotals {
  const calls = callsOf(projectDir, runId, env, now);
  return calls.length > 0 ? sumCalls(calls) : noSpend();
}

/** The moment a run's figure is summed from: its family's start when it leads one, else its own. */
function firstDay(run: SpendRun): string {
  return run.parent === null ? run.family_since : run.started_at;
}

/**
 * spendOf for many runs of one project at once (a listing), with the same figures: the ledger's run records
 * are listed once (a run with none costs no failed open) and the days the runs' figures reach back to are
 * read once, each call filed under the runs it counts for, instead of every day's calls gone through again
 * for each run (10,000 runs of one call each: 10^8 calls looked at).
 */
export function spendLister(
  projectDir: string,
  ids: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
  now: Date = new Date(),
): (id: string) => SpendTotals {
  const project = projectKey(projectDir);
  const dir = join(spendDir(env), "runs");
  const cacheFile = join(dirname(spendDir(env)), "cache", "spend", `${sha256Hex(project).slice(0, 40)}.json`);
  const cache = dirCache(dir, cacheFile, isDay, now.getTime());
  const listed = listedIn(dir);
  let hash: ((text: string) => string) | undefined;
  // Each run the ledger knows, with the first day its figure sums: the last listing's, by run id, while the
  // ledger's run records are unchanged.
  const from = new Map<string, string>();
  for (const id of ids) {
    const day = cache.get(id, () => {
      const name = runFileName(project, id, (hash ??= sha256ForMany(ids.length)));
      if (!listed(name)) return null;
      const run = readRunFile(join(dir, name), project, id);
      return run === null ? null : dayOrNull(firstDay(run));
    });
    if (day !== null) from.set(id, day);
  }
  cache.save();
  let earliest: string | null = null;
  for (const day of from.values()) if (earliest === null || day < earliest) earliest = day;
  // Each call of the project, in ledger order, summed under its run and (a child's) under its family's first
  // run, from the first day of each.
  const sums = new Map<string, CallSum>();
  const add = (key: string, day: string, call: SpendCall) => {
    const first = from.get(key);
    if (first === undefined || day < first) return;
    let sum = sums.get(key);
    if (!sum) sums.set(key, (sum = new CallSum()));
    sum.add(call);
  };
  if (earliest !== null) {
    for (const { day, calls } of new SpendReader(env).days(earliest, dayOf(now))) {
      for (const call of calls) {
        if (call.project !== project) continue;
        add(call.run, day, call);
        if (call.family !== call.run) add(call.family, day, call);
      }
    }
  }
  return (id) => sums.get(id)?.totals() ?? noSpend();
}

function isDay(value: unknown): value is string {
  return typeof value === "string" && /^\d{4}-\d{2}-\d{2}$/.test(value);
}

/** dayOf, or null for a moment that is not one (a record not written by ralph). */
function dayOrNull(at: string): string | null {
  const time = Date.parse(at);
  return Number.isFinite(time) ? dayOf(time) : null;
}
