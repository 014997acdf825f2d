// What a `--parallel` parent touches outside itself: child runs, the task list, their records, the clock.
import type { SignalSource } from "../engine/engine-io.js";
import type { SentinelState } from "../control/control-files.js";
import type { MergeIo } from "./merge-child.js";
import type { RunEvent } from "../store/event-log.js";
import type { RunHost } from "../run/new-status.js";
import type { RecordListener } from "../run/run-record.js";
import type { RunPaths } from "../store/run-paths.js";
import type { RunStatus } from "../store/status-file.js";
import type { RunSettings } from "../config/run-options.js";
import type { Plan } from "../store/plan-file.js";
import type { SpendBook } from "../spend/spend-book.js";

/** How a child process ended, and the first lines it wrote on stderr (a usage error, say). */
export interface ChildExit {
  code: number | null;
  signal: string | null;
  stderr: string;
}

/** A started child run: its process can be signalled; `exited` settles once it is gone. */
export interface ChildHandle {
  signal(signal: NodeJS.Signals): void;
  exited: Promise<ChildExit>;
}

/** A child's or resolve run's share of the parent's limits: what is left of them when it starts (the runtime in whole seconds: remainingRuntimeMs). */
export interface ChildLimits {
  maxRuntimeMs: number | null;
  maxCostUsd: number | null;
}

/** What a child run is started with. */
export interface ChildStart extends ChildLimits {
  childId: string;
  taskId: string;
}

/** A child's runtime limit in seconds, as `--max-runtime` gives it to a child run (already whole: remainingRuntimeMs). */
export function childRuntimeSeconds(limits: ChildLimits): number | null {
  return limits.maxRuntimeMs === null ? null : limits.maxRuntimeMs / 1000;
}

/** The outside world of a fan-out. */
export interface FanOutIo {
  startChild(start: ChildStart): ChildHandle;
  /** Git, checks and the agent in the parent's integration worktree (`resolve` and `interrupted` come from the fan-out). */
  merge: Omit<MergeIo, "resolve" | "interrupted" | "mayResolve">;
  /** Starts resolve run `resolveId` on the integration worktree with `prompt`, bounded by what is left of the parent's limits. */
  startResolve(resolveId: string, prompt: string, limits: ChildLimits): ChildHandle;
  /** The parent's own events so far (continuing: the merges still owed). */
  readEvents(paths: RunPaths): RunEvent[];
  readChildStatus(childId: string): RunStatus | null;
  readSentinels(paths: RunPaths): SentinelState;
  /** Creates a child's STOP file (`now` ends its agent at once); false while its run directory does not exist yet. */
  stopChild(childId: string, now: boolean): boolean;
  now(): Date;
  env: NodeJS.ProcessEnv;
  signals: SignalSource;
  host: RunHost;
  listener: RecordListener;
  /** The spend ledger: the children's and resolve runs' spend is read there, never from their status.json. */
  spend?: SpendBook;
}

/** What to fan out. */
export interface FanOutOptions {
  projectDir: string;
  runId: string;
  settings: RunSettings & { parallel: number; tasks: string };
  plan: Plan;
  /** The parent's previous status when continuing it (`ralph continue`): its children count and spend go on. */
  previous: RunStatus | null;
  notes?: string[];
  /** The parent's integration worktree: its top, branch, the task file's path from the top and its text at HEAD. */
  integration: {
    path: string;
    branch: string;
    head: string;
    tasksPath: string;
    tasksText: string;
    base: string;
    baseBranch: string | null;
  };
  /** How the parent's process supervises its children's agents. */
  supervision: RunStatus["supervision"];
}
