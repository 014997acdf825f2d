// The run directory of an in-session loop: created at start, re-opened by every hook call, ended through finishRun.
import { existsSync } from "node:fs";
import { finishRun, type Ending, type RunResult } from "../loop/finish-run.js";
import { RunRecord, type RecordListener } from "../loop/run-record.js";
import { generateRunId, runPaths } from "../store/run-paths.js";
import { writeStateFile } from "../store/state-file.js";
import { readStatusFile, type RunStatus } from "../store/status-file.js";
import { patchHookState, type HookLoopState } from "./hook-state.js";

/** The outside world as the hook code needs it. */
export interface HookClock {
  now: () => Date;
  pid: number;
  hostname: string;
}

// A hook's stdout is read by Claude Code: the record must never print.
const SILENT: RecordListener = { event: () => undefined, log: () => undefined };

/** A run id not used yet in `projectDir`. */
export function newRunId(projectDir: string, now: Date): string {
  for (;;) {
    const id = generateRunId(now);
    if (!existsSync(runPaths(projectDir, id).dir)) return id;
  }
}

function initialStatus(projectDir: string, runId: string, state: HookLoopState, clock: HookClock): RunStatus {
  const now = clock.now().toISOString();
  return {
    schema_version: 1,
    run_id: runId,
    mode: "hook",
    pid: clock.pid,
    pid_start: null,
    hostname: clock.hostname,
    cwd: projectDir,
    agent: "claude",
    state: "running",
    iteration: state.iteration,
    max_iterations: state.maxIterations,
    calls: state.iteration - 1,
    cost_usd: 0,
    tokens: { input: 0, output: 0 },
    session_id: state.sessionId === "" ? null : state.sessionId,
    current_task: null,
    started_at: state.startedAt ?? now,
    updated_at: now,
    ended_at: null,
    exit_reason: null,
    exit_code: null,
    last_action: `iteration ${state.iteration} started in the Claude Code session`,
  };
}

/** Creates the run directory of a new loop: status.json (mode "hook"), state.md, events, log and progress. */
export function createHookRun(projectDir: string, runId: string, state: HookLoopState, clock: HookClock): RunRecord {
  const paths = runPaths(projectDir, runId);
  const record = RunRecord.create(paths, initialStatus(projectDir, runId, state, clock), SILENT, clock.now);
  // The hook records a failed write by ending the loop FAILED (its caller catches): let it throw.
  record.guard.rethrow = true;
  // A snapshot for the record: the live state of an in-session loop is .claude/ralph-loop.local.md.
  writeStateFile(paths.state, {
    active: true,
    maxIterations: state.maxIterations,
    completionPromise: state.completionPromise,
    completionCriteria: state.completionCriteria,
    tasks: null,
    prompt: Buffer.from(state.prompt),
  });
  record.event("run_started", { agent: "claude", mode: "hook", max_iterations: state.maxIterations, cwd: projectDir, session_id: record.status.session_id });
  record.event("iteration_started", { iteration: state.iteration, task: null });
  record.log(`in-session loop started (Claude Code Stop hook), max ${state.maxIterations || "unlimited"} iterations`);
  record.progress([["started_at", record.status.started_at], ["mode", "hook"], ["max_iterations", state.maxIterations]]);
  return record;
}

/** Re-opens the record of a loop's run; null when its status.json is gone or unreadable. */
export function openHookRun(projectDir: string, runId: string, clock: HookClock): RunRecord | null {
  const paths = runPaths(projectDir, runId);
  const status = readStatusFile(paths.status);
  if (!status) return null;
  const record = new RunRecord(paths, status, SILENT, clock.now);
  record.guard.rethrow = true;
  return record;
}

/** Whether the run has already ended, by the runner's status (never by text an agent can append to progress.txt). */
export function hasEnded(record: RunRecord): boolean {
  return record.status.state === "ended";
}

/**
 * Ends a loop: `active: false` in the state file (kept, so its history is not lost), then finishRun, which
 * writes the completion marker. A run that has already ended is not ended twice.
 */
export function endHookLoop(stateFile: string, record: RunRecord | null, ending: Ending, clock: HookClock): RunResult | null {
  try {
    patchHookState(stateFile, { active: false });
  } catch {
    // The marker below matters more; a state file that cannot be written is reported by the caller's message.
  }
  if (!record || hasEnded(record)) return null;
  return finishRun(record, ending, clock.now());
}
