// What a run spent, as every view shows it (status, list, report, the dashboard): summed from the spend
// ledger, never from the run's status.json or events.jsonl, which its agent can write. A run's figure holds
// its own calls, and its children's and resolve runs' when it is a `--parallel` parent (a family's first run).
import { dayOf, projectKey, readRun, SpendReader, spendDir } from "./spend-ledger.js";
import type { SpendCall } from "./spend-record.js";
import { noSpend, sumCalls, type SpendTotals } from "./spend-totals.js";

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
export function callsOf(projectDir: string, runId: string, env: NodeJS.ProcessEnv = process.env, now: Date = new Date()): SpendCall[] {
  const project = projectKey(projectDir);
  const run = readRun(project, runId, env);
  if (!run) return [];
  const from = dayOf(run.parent === null ? run.family_since : run.started_at);
  return readerFor(env)
    .calls(from, dayOf(now))
    .filter((call) => call.project === project && (call.run === runId || (call.family === runId && call.run !== runId)));
}

/** What run `runId` spent (nothing when the ledger does not know it: a run from before the ledger, a foreign one). */
export function spendOf(projectDir: string, runId: string, env: NodeJS.ProcessEnv = process.env, now: Date = new Date()): SpendTotals {
  const calls = callsOf(projectDir, runId, env, now);
  return calls.length > 0 ? sumCalls(calls) : noSpend();
}
