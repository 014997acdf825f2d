// The runs of every served project, kept current for the table: a run directory that changes is read
// again at once (fs.watch), and a periodic rescan catches new runs, dead runners and missed events.
import { statSync, watch, type FSWatcher } from "node:fs";
import { isRunnerAlive } from "../control/runner-alive.js";
import { runIds } from "../control/list-runs.js";
import { spendLister } from "../spend/spend-of.js";
import type { SpendTotals } from "../spend/spend-totals.js";
import { runPaths, runsDir } from "../store/run-paths.js";
import type { Project } from "./projects.js";
import { readRunRow, type RunRow } from "./run-row.js";

const RESCAN_MS = 2000;
const SETTLE_MS = 20;

/** Live rows of all runs; listeners hear of every changed row. */
export class RunsHub {
  private readonly rows = new Map<string, RunRow>();
  private readonly mtimes = new Map<string, number>();
  private readonly watchers = new Map<string, FSWatcher>();
  private readonly pending = new Map<string, NodeJS.Timeout>();
  private readonly listeners = new Set<(row: RunRow) => void>();
  private readonly timer: NodeJS.Timeout;

  private readonly watchRuns: boolean;

  /**
   * `rescanMs`: how often every run is looked at again; `watchRuns` false: a live run's directory is not
   * watched (its row is read at each rescan instead: a reader that draws a few times a second is spared the
   * wake-up of every line a streaming agent writes). The dashboard keeps the defaults.
   */
  constructor(
    private readonly projects: Project[],
    options: { rescanMs?: number; watchRuns?: boolean } = {},
  ) {
    this.watchRuns = options.watchRuns ?? true;
    for (const project of projects) this.rescan(project, true);
    this.timer = setInterval(
      () => this.projects.forEach((project) => this.rescan(project, true)),
      options.rescanMs ?? RESCAN_MS,
    );
  }

  /** Every row, oldest run first within each project. */
  all(): RunRow[] {
    return [...this.rows.values()];
  }

  /** The row of one run, if known. */
  get(projectKey: string, id: string): RunRow | undefined {
    return this.rows.get(`${projectKey}/${id}`);
  }

  /** Calls `listener` with each changed row until the returned function is called. */
  subscribe(listener: (row: RunRow) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Stops every watcher and timer. */
  close(): void {
    clearInterval(this.timer);
    this.watchers.forEach((watcher) => watcher.close());
    this.pending.forEach((timer) => clearTimeout(timer));
    this.listeners.clear();
  }

  private rescan(project: Project, everything: boolean): void {
    if (everything) this.watchDir(`dir:${project.key}`, runsDir(project.dir), () => this.rescan(project, false));
    const stale = runIds(project.dir).filter((id) => {
      const key = `${project.key}/${id}`;
      const row = this.rows.get(key);
      // An ended run changes only when continued; its status.json's mtime says so without reading it.
      return (
        !row ||
        (everything && (row.active || row.state === "stale" || this.statusMtime(project, id) !== this.mtimes.get(key)))
      );
    });
    // Many runs (the first scan): their spend read in one pass over the ledger, not one pass a run.
    const spend = stale.length > 1 ? spendLister(project.dir, stale, process.env, new Date()) : undefined;
    for (const id of stale) this.refresh(project, id, spend);
  }

  private statusMtime(project: Project, id: string): number {
    try {
      return statSync(runPaths(project.dir, id).status).mtimeMs;
    } catch {
      return 0;
    }
  }

  private refresh(project: Project, id: string, spend?: (id: string) => SpendTotals): void {
    const key = `${project.key}/${id}`;
    this.mtimes.set(key, this.statusMtime(project, id));
    const row = readRunRow(project, id, isRunnerAlive, new Date(), spend);
    const before = this.rows.get(key);
    this.rows.set(key, row);
    // A stale row may be a run still starting (no status.json yet): watched too, so it shows at once.
    if (this.watchRuns && (row.active || row.state === "stale"))
      this.watchDir(key, runPaths(project.dir, id).dir, () => this.soon(project, id));
    else this.unwatch(key);
    if (before && sameRow(before, row)) return;
    for (const listener of this.listeners) listener(row);
  }

  /** Coalesces a burst of file events (status.json replaced, events appended) into one read. */
  private soon(project: Project, id: string): void {
    const key = `${project.key}/${id}`;
    if (this.pending.has(key)) return;
    this.pending.set(
      key,
      setTimeout(() => {
        this.pending.delete(key);
        this.refresh(project, id);
      }, SETTLE_MS),
    );
  }

  private watchDir(key: string, dir: string, onChange: () => void): void {
    if (this.watchers.has(key)) return;
    try {
      const watcher = watch(dir, onChange);
      watcher.on("error", () => this.unwatch(key));
      this.watchers.set(key, watcher);
    } catch {
      // Not there yet, or no watches left: the rescan keeps the row current, only slower.
    }
  }

  private unwatch(key: string): void {
    this.watchers.get(key)?.close();
    this.watchers.delete(key);
  }
}

/** Rows equal but for their age, which every reading changes. */
function sameRow(a: RunRow, b: RunRow): boolean {
  return JSON.stringify({ ...a, age_seconds: 0 }) === JSON.stringify({ ...b, age_seconds: 0 });
}
