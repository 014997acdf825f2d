// The inputs of the loop engine: options from the CLI and the outside world as injectable dependencies.
import type { AgentAdapter, AgentName } from "../agents/types.js";
import type { RunSettings } from "../config/run-options.js";
import type { TreeMarker } from "../process/inventory.js";
import type { SpawnAgentOptions, SpawnResult } from "../process/spawn-agent.js";
import type { SupervisionMode } from "../process/supervision.js";
import type { RunState } from "../store/state-file.js";
import type { RunStatus } from "../store/status-file.js";
import type { InterruptSignal } from "./exit-reasons.js";
import type { RecordListener } from "./run-record.js";

/** What to run. */
export interface LoopOptions {
  projectDir: string;
  runId: string;
  settings: RunSettings;
  /** The state written to state.md at the start (ignored when continuing: the file is re-read). */
  state: RunState;
  /** The previous status when continuing a run (`ralph continue`), to keep its counters. */
  previous: RunStatus | null;
  /** Lines to log at the start (e.g. a stale lock that was taken over). */
  notes?: string[];
}

/** The signals the runner received, as aborts. */
export interface SignalSource {
  interrupted: AbortSignal;
  urgent: AbortSignal;
  firstSignal(): InterruptSignal | null;
}

/** Everything the loop touches outside itself; the CLI passes the real ones, tests may pass fakes. */
export interface LoopDeps {
  adapterFor: (name: AgentName) => AgentAdapter;
  spawnAgent: (options: SpawnAgentOptions) => Promise<SpawnResult>;
  /** How agent trees are kept (recorded in run_started and status.json); "tree" when not given. */
  supervision?: SupervisionMode;
  signals: SignalSource;
  listener: RecordListener;
  now: () => Date;
  env: NodeJS.ProcessEnv;
  hostname: string;
  pid: number;
  pidStart: string | null;
  /** Starts a watchdog that ends the agent tree if the runner dies; returns its disposer. */
  startGuardian?: (marker: TreeMarker, graceMs: number) => { dispose(): void };
  /** Ctrl-Z: stops and continues the marked agent tree with the runner. */
  watchJobControl?: (marker: TreeMarker) => { dispose(): void };
}
