// A `--parallel` child run as an engine inside its parent's process: its own run directory, locks, ledger
// record, worktree, sandbox, agent cgroups and control files, sharing only the process with its siblings.
import { realIo } from "../engine/engine-io.js";
import { runEngine } from "../engine/run-engine.js";
import { markEndedIfNot } from "../run/finish-run.js";
import type { InterruptSignal } from "../exit/exit-reasons.js";
import type { LockHolder } from "../control/lock-file.js";
import type { TreeMarker } from "../process/inventory.js";
import type { Supervision } from "../process/supervision.js";
import type { Guardian } from "../process/guardian.js";
import type { SpawnAgentOptions } from "../process/spawn-agent.js";
import type { RunHost } from "../run/new-status.js";
import { childRuntimeSeconds, type ChildExit, type ChildHandle, type ChildStart } from "../parallel/fan-out-io.js";
import { childSignals, type ChildSignals } from "../parallel/child-signals.js";
import { childRun } from "./child-settings.js";
import { openRun, type OpenedRun } from "./open-run.js";
import { runSpawners } from "./run-spawners.js";
import { supervisionNotes } from "./supervision-notes.js";
import { commitForEngine, commitPolicy } from "./run-worktree.js";
import type { LaunchWords } from "./launch-words.js";

/** What the parent's process shares with every child engine in it. */
export interface ChildHost {
  /** The parent's supervision: each child's agents get cgroups of their own under the parent's runner cgroup. */
  supervision: Supervision;
  /** Carried by every child's agents besides their own run's marker: the parent's guardian and Ctrl-Z find them by it. */
  marker: TreeMarker;
  host: RunHost;
  env: NodeJS.ProcessEnv;
  /** The parent's guardian: told of each child's progress file, it marks the children it finds unended INTERRUPTED when the parent dies. */
  guardian: Pick<Guardian, "markOnDeath" | "unmark">;
  /** The parent's sandbox probe, for the same settings (null: not sandboxed). */
  sandboxProbe: OpenedRun["sandboxProbe"];
  /** Run just before the parent's process is forced out (a second signal): each running child marks itself INTERRUPTED. */
  onForcedExit: Set<(signal: InterruptSignal) => void>;
  /** How a child's failure to start is said, and its exit code, as a child process would have said it. */
  words: Pick<LaunchWords, "failure" | "worktreeFailure">;
}

/** A listener that shows nothing: a child writes nothing where a person looks (its parent speaks for it). */
const SILENT = { event: () => undefined, log: () => undefined };

/** Starts child `start.childId` of `parentId` as an engine in this process; it never throws into the parent. */
export function startChildEngine(
  projectDir: string,
  parentId: string,
  start: ChildStart,
  shared: ChildHost,
): ChildHandle {
  const signals = childSignals();
  const exited = runChild(projectDir, parentId, start, shared, signals).catch((error: unknown): ChildExit => {
    const said = shared.words.failure(error);
    return { code: said.code, signal: null, stderr: `ralph: ${said.line}\n` };
  });
  return { exited, signal: (signal) => signals.pass(signal) };
}

/** The child's limits as `--max-cost` and `--max-runtime` (whole seconds) gave them to a child process. */
function givenLimits(start: ChildStart): { maxCostUsd?: number; maxRuntimeMs?: number } {
  const seconds = childRuntimeSeconds(start);
  return {
    ...(start.maxCostUsd !== null ? { maxCostUsd: start.maxCostUsd } : {}),
    ...(seconds !== null ? { maxRuntimeMs: seconds * 1000 } : {}),
  };
}

async function runChild(
  projectDir: string,
  parentId: string,
  start: ChildStart,
  shared: ChildHost,
  signals: ChildSignals,
): Promise<ChildExit> {
  await Promise.resolve(); // the fan-out holds the handle before anything of the child happens
  const { settings, plan } = childRun(projectDir, parentId, start.taskId, start.childId, givenLimits(start));
  const input = { projectDir, runId: start.childId, settings, plan, previous: null, projectLock: false };
  const { supervision, host } = shared;
  const holder: LockHolder = {
    pid: host.pid,
    pid_start: host.pidStart,
    hostname: host.hostname,
    run_id: start.childId,
    acquired_at: new Date().toISOString(),
  };
  const notes = supervisionNotes(supervision, `, shared with the parent run ${parentId}'s process`);
  const opened = await openRun(input, {
    holder,
    supervision: supervision.mode,
    notes,
    warn: () => undefined,
    sandboxProbe: shared.sandboxProbe,
  });
  const forced = (signal: InterruptSignal) => markEndedIfNot(opened.paths.progress, "INTERRUPTED", signal);
  shared.onForcedExit.add(forced);
  shared.guardian.markOnDeath(opened.paths.progress);
  const { sandbox } = opened;
  // Every agent of the child carries the parent's marker too (the child's own is set by the engine).
  const marked = (options: SpawnAgentOptions): SpawnAgentOptions => ({
    ...options,
    env: { ...options.env, [shared.marker.key]: shared.marker.value },
  });
  try {
    const result = await runEngine(
      {
        projectDir,
        runId: start.childId,
        settings,
        plan,
        previous: null,
        notes,
        workDir: opened.place.dir,
        worktree: opened.worktree,
        commit: commitPolicy(settings) === "iteration",
        parent: settings.parent,
      },
      realIo({
        env: shared.env,
        signals: signals.source,
        listener: SILENT,
        host,
        ...runSpawners(supervision, sandbox, marked),
        supervision: supervision.mode,
        commitIteration: commitForEngine(shared.words.worktreeFailure),
      }),
    );
    // As a child process would have ended: dead of the signal passed on, else with the run's exit code.
    return result.reason === "INTERRUPTED" && result.signal
      ? { code: null, signal: result.signal, stderr: "" }
      : { code: result.exitCode, signal: null, stderr: "" };
  } finally {
    shared.onForcedExit.delete(forced);
    shared.guardian.unmark(opened.paths.progress);
    await sandbox?.close();
    opened.release();
  }
}
