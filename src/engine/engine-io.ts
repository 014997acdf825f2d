// Everything the engine touches outside itself, as one interface: the CLI passes the real one, tests pass fakes.
import { adapterFor } from "../agents/adapters.js";
import type { AgentAdapter, AgentName } from "../agents/types.js";
import type { InterruptSignal } from "../exit/exit-reasons.js";
import { checkCriteria, type CriteriaContext, type Criterion, type CriterionVerdict } from "../judge/criteria.js";
import { takeFingerprint, type Fingerprint } from "../judge/progress-fingerprint.js";
import { loadTasks, type TaskListResult } from "../judge/tasks.js";
import { reopenTasks, type ReopenResult } from "../judge/reopen-tasks.js";
import type { RunHost } from "../run/new-status.js";
import type { RecordListener } from "../run/run-record.js";
import type { TreeMarker } from "../process/inventory.js";
import type { SupervisionMode } from "../process/supervision.js";
import { spawnAgent, type SpawnAgentOptions, type SpawnResult } from "../process/spawn-agent.js";
import { writePlanFile, type Plan } from "../store/plan-file.js";
import type { RunPaths } from "../store/run-paths.js";
import type { SandboxIo } from "../sandbox/sandbox.js";
import { readSentinels, type SentinelState } from "../control/control-files.js";
import { watchControl } from "../control/control-watch.js";
import { watchPlan, type PlanWatch } from "./plan-watch.js";
import { SpendBook } from "../spend/spend-book.js";

/** The signals the runner received, as aborts. */
export interface SignalSource {
  /** Aborted on the first SIGINT, SIGTERM or SIGHUP. */
  interrupted: AbortSignal;
  /** Aborted on a second signal: teardown skips the grace period. */
  urgent: AbortSignal;
  firstSignal(): InterruptSignal | null;
}

/** The outside world of one engine. The run's own record files are written by RunRecord under the run directory. */
export interface EngineIo {
  // spawn
  adapterFor: (name: AgentName) => AgentAdapter;
  spawnAgent: (options: SpawnAgentOptions) => Promise<SpawnResult>;
  /** How agent trees are kept (recorded in run_started and status.json); "tree" when not given. */
  supervision?: SupervisionMode;
  /** Starts a watchdog that ends the agent tree if the runner dies; returns its disposer. */
  startGuardian?: (marker: TreeMarker, graceMs: number) => { dispose(): void };
  /** Starts a reviewer (`type: review`): supervised like spawnAgent; in a sandbox, with the work tree read-only. spawnAgent when absent. */
  spawnReviewer?: (options: SpawnAgentOptions, agent: AgentName) => Promise<SpawnResult>;
  /** Starts the person's own commands (notifications): supervised like spawnAgent, never sandboxed; spawnAgent when absent. */
  spawnOwn?: (options: SpawnAgentOptions) => Promise<SpawnResult>;
  /** The run's sandbox (--sandbox): agents and check commands run inside it. */
  sandbox?: SandboxIo;
  /** Ctrl-Z: stops and continues the marked agent tree with the runner. */
  watchJobControl?: (marker: TreeMarker) => { dispose(): void };
  // fs: the control files and the task list
  writePlan: (file: string, plan: Plan) => void;
  watchPlan: (paths: RunPaths, plan: Plan, runnerPid: number, marker: TreeMarker) => PlanWatch;
  readSentinels: (paths: RunPaths) => SentinelState;
  watchControl: (paths: RunPaths, onChange: () => void) => { close(): void };
  readTasks: (file: string) => TaskListResult;
  /** Marks tasks not done again in a task list, changing only their flags. */
  reopenTasks: (file: string, ids: readonly string[]) => ReopenResult;
  // git and shell
  /** Commits an iteration's changes on the run's branch (`--commit iteration`); the CLI words a failure. */
  commitIteration?: (what: {
    dir: string;
    runId: string;
    iteration: number;
    task: string | null;
    signal?: AbortSignal;
  }) => Promise<{ ok: true; commit: string | null; files: number } | { ok: false; message: string }>;
  /** The stall check's look at the work tree; aborting `signal` ends the git command under way. */
  fingerprint: (cwd: string, env: NodeJS.ProcessEnv, tasksFile?: string, signal?: AbortSignal) => Promise<Fingerprint>;
  checkCriteria: (criteria: Criterion[], context: CriteriaContext) => Promise<CriterionVerdict[]>;
  // clock, env, signals, host
  now: () => Date;
  setTimer: (ms: number, fire: () => void) => () => void;
  env: NodeJS.ProcessEnv;
  signals: SignalSource;
  host: RunHost;
  /** Receives the run's event stream and log lines (the terminal renderer). */
  listener: RecordListener;
  /** The spend ledger (src/spend): each agent call's spend is recorded there and every budget checked there; none in tests that pass no book. */
  spend?: SpendBook;
}

/** The real world, with what only the CLI knows passed in. */
export function realIo(
  given: Pick<EngineIo, "env" | "signals" | "host" | "listener"> &
    Partial<
      Pick<
        EngineIo,
        | "spawnAgent"
        | "spawnReviewer"
        | "spawnOwn"
        | "sandbox"
        | "supervision"
        | "startGuardian"
        | "watchJobControl"
        | "commitIteration"
        | "spend"
      >
    >,
): EngineIo {
  return {
    adapterFor,
    spawnAgent,
    writePlan: writePlanFile,
    watchPlan,
    readSentinels,
    watchControl,
    readTasks: loadTasks,
    reopenTasks,
    fingerprint: takeFingerprint,
    checkCriteria,
    now: () => new Date(),
    spend: new SpendBook(given.env),
    setTimer: (ms, fire) => {
      const timer = setTimeout(fire, Math.max(0, ms));
      return () => clearTimeout(timer);
    },
    ...given,
  };
}
