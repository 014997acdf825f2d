// The run directory of an in-session loop: created at start, re-opened by every hook call, ended through finishRun.
import { existsSync, mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { recordRunCreated } from "../control/run-ledger.js";
import { finishRun, type Ending, type RunResult } from "../run/finish-run.js";
import { RunRecord, type RecordListener } from "../run/run-record.js";
import { generateRunId, runPaths } from "../store/run-paths.js";
import { writePlanFile } from "../store/plan-file.js";
import { readStatusFile } from "../store/status-file.js";
import { newStatus } from "../run/new-status.js";
import { patchHookLoop, type HookLoop } from "./hook-loop-file.js";

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

/** Creates the run directory of a new loop: status.json (mode "hook"), state.md, events, log and progress. */
export function createHookRun(projectDir: string, runId: string, loop: HookLoop, clock: HookClock): RunRecord {
  const paths = runPaths(projectDir, runId);
  const status = newStatus({
    runId,
    mode: "hook",
    cwd: projectDir,
    agent: "claude",
    host: { pid: clock.pid, pidStart: null, hostname: clock.hostname },
    now: clock.now(),
    state: "running",
    lastAction: `iteration ${loop.iteration} started in the Claude Code session`,
    maxIterations: loop.maxIterations,
    iteration: loop.iteration,
    calls: loop.iteration - 1,
    sessionId: loop.sessionId === "" ? null : loop.sessionId,
    startedAt: loop.startedAt,
  });
  mkdirSync(dirname(paths.dir), { recursive: true, mode: 0o700 });
  recordRunCreated(paths.dir, runId, null, null);
  const record = RunRecord.create(paths, status, SILENT, clock.now);
  // The hook records a failed write by ending the loop FAILED (its caller catches): let it throw.
  record.guard.rethrow = true;
  // A snapshot for the record: the live loop is in .claude/ralph-loop.local.md.
  writePlanFile(paths.state, {
    active: true,
    maxIterations: loop.maxIterations,
    completionPromise: loop.completionPromise,
    completionCriteria: loop.completionCriteria,
    tasks: null,
    prompt: Buffer.from(loop.prompt),
  });
  record.event({
    type: "run_started",
    agent: "claude",
    mode: "hook",
    max_iterations: loop.maxIterations,
    cwd: projectDir,
    session_id: record.status.session_id,
  });
  record.event({ type: "iteration_started", iteration: loop.iteration, task: null });
  record.log(`in-session loop started (Claude Code Stop hook), max ${loop.maxIterations || "unlimited"} iterations`);
  record.progress([
    ["started_at", record.status.started_at],
    ["mode", "hook"],
    ["max_iterations", loop.maxIterations],
  ]);
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
export function endHookLoop(
  loopFile: string,
  record: RunRecord | null,
  ending: Ending,
  clock: HookClock,
): RunResult | null {
  try {
    patchHookLoop(loopFile, { active: false });
  } catch {
    // The marker below matters more; a loop file that cannot be written is reported by the caller's message.
  }
  if (!record || hasEnded(record)) return null;
  return finishRun(record, ending, clock.now());
}
