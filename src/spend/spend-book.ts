// One run's handle on the spend ledger: it opens the run's record, appends each agent call's spend, checks
// the budgets before each call, and sums what the run (or a child of it) spent. The engine and a `--parallel`
// parent use it through their I/O; tests that pass no book run without a ledger.
import type { GateVerdict } from "./spend-gate.js";
import { SpendGate } from "./spend-gate.js";
import { dayOf, projectKey, readRun, SpendReader } from "./spend-ledger.js";
import type { SpendCall, SpendRun } from "./spend-record.js";
import { openSpendRun, recordCall, type CallSeen, type SpendStart } from "./spend-run.js";
import { sumCalls, type SpendTotals } from "./spend-totals.js";

/** A run's spend in the ledger. */
export class SpendBook {
  private gate: SpendGate | null = null;
  private readonly reader: SpendReader;

  constructor(private readonly env: NodeJS.ProcessEnv) {
    this.reader = new SpendReader(env);
  }

  /** The run's record, once opened. */
  get run(): SpendRun | null {
    return this.gate?.run ?? null;
  }

  /** Records the run (see openSpendRun); `known` says whether the ledger knew it before (a continued run). */
  open(start: Omit<SpendStart, "env">): { run: SpendRun; known: boolean } {
    const known = readRun(projectKey(start.projectDir), start.runId, this.env) !== null;
    const run = openSpendRun({ ...start, env: this.env });
    this.gate = new SpendGate(run, this.env);
    return { run, known };
  }

  /** Appends a call's spend; null before the run is opened. */
  record(seen: CallSeen): SpendCall | null {
    const run = this.run;
    return run ? recordCall(run, seen, this.env) : null;
  }

  /** The budgets' verdict before the next call (null: go on, or no run opened). */
  check(nowMs: number): GateVerdict {
    return this.gate?.check(nowMs) ?? null;
  }

  /** What run `runId` of this run's project spent: its own calls, and its children's when it is a family's first run. */
  totalsOf(runId: string, nowMs: number = Date.now()): SpendTotals {
    const run = this.run;
    if (!run) return sumCalls([]);
    const since = dayOf(run.family_since);
    return sumCalls(
      this.reader
        .calls(since, dayOf(nowMs))
        .filter((call) => call.project === run.project && (call.run === runId || call.family === runId)),
    );
  }
}
