// The first status.json of a run, the same shape for `ralph run` and the in-session hook.
import type { RunStatus } from "../store/status-file.js";

/** The process that records a run. */
export interface RunHost {
  pid: number;
  pidStart: string | null;
  hostname: string;
}

/** What a new (or continued) run's status starts from; counters default to zero. */
export interface StatusStart {
  runId: string;
  mode: RunStatus["mode"];
  cwd: string;
  agent: string;
  host: RunHost;
  now: Date;
  state: RunStatus["state"];
  lastAction: string;
  maxIterations: number;
  iteration?: number;
  calls?: number;
  costUsd?: number;
  tokens?: RunStatus["tokens"];
  sessionId?: string | null;
  startedAt?: string | null;
  /** `ralph run` only: how agent trees are kept. */
  supervision?: RunStatus["supervision"];
  /** `ralph run --worktree` only: the run's worktree and branch. */
  worktree?: { path: string; branch: string; base?: string | null; baseBranch?: string | null } | null;
  /** A child run of `--parallel`: its parent run's id. */
  parent?: string | null;
}

/** A status.json for a run that has not ended. */
export function newStatus(start: StatusStart): RunStatus {
  const now = start.now.toISOString();
  return {
    schema_version: 1,
    run_id: start.runId,
    mode: start.mode,
    pid: start.host.pid,
    pid_start: start.host.pidStart,
    hostname: start.host.hostname,
    cwd: start.cwd,
    agent: start.agent,
    state: start.state,
    iteration: start.iteration ?? 0,
    max_iterations: start.maxIterations,
    calls: start.calls ?? 0,
    cost_usd: start.costUsd ?? 0,
    tokens: start.tokens ?? { input: 0, output: 0 },
    session_id: start.sessionId ?? null,
    current_task: null,
    started_at: start.startedAt ?? now,
    updated_at: now,
    ended_at: null,
    exit_reason: null,
    exit_code: null,
    last_action: start.lastAction,
    ...(start.mode === "run" ? { failures: 0, supervision: start.supervision ?? "tree", resources: null } : {}),
    ...(start.worktree ? { branch: start.worktree.branch, worktree: start.worktree.path } : {}),
    ...(start.worktree?.base ? { base: start.worktree.base, base_branch: start.worktree.baseBranch ?? null } : {}),
    ...(start.parent ? { parent: start.parent } : {}),
  };
}
