// Runs the loop in the foreground with the real world wired in: locks, processes, signals, guardian, terminal.
import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import { realIo } from "../engine/engine-io.js";
import { runEngine } from "../engine/run-engine.js";
import { markEndedIfNot, type RunResult } from "../run/finish-run.js";
import { startGuardian } from "../process/guardian.js";
import { watchJobControl } from "../process/job-control.js";
import { readProcess } from "../process/proc-table.js";
import { dieOfSignal, watchSignals } from "../process/signals.js";
import { FAN_OUT_MARKER_KEY, Supervision } from "../process/supervision.js";
import type { LockHolder } from "../control/lock-file.js";
import { spendOf } from "../spend/spend-of.js";
import type { StartRunInput } from "./start-run-input.js";
import { refused } from "./launch-failure.js";
import type { LaunchWords } from "./launch-words.js";
import { watchParentPipe } from "../process/parent-pipe.js";
import { runSpawners } from "./run-spawners.js";
import { runFanOut } from "../parallel/fan-out.js";
import { childProcesses, realFanOutIo } from "./child-runs.js";
import type { ChildHost } from "./child-engine.js";
import { commitForEngine, commitPolicy } from "./run-worktree.js";
import { openRun, type OpenedRun } from "./open-run.js";
import { supervisionNotes } from "./supervision-notes.js";

export type { StartRunInput } from "./start-run-input.js";

/** Runs the loop and returns the exit code; on a signal the process dies of that signal instead. */
export async function startRun(input: StartRunInput, words: LaunchWords): Promise<number> {
  const pidStart = readProcess(process.pid)?.startTime ?? null;
  const holder: LockHolder = {
    pid: process.pid,
    pid_start: pidStart,
    hostname: hostname(),
    run_id: input.runId,
    acquired_at: new Date().toISOString(),
  };
  // The environment as a plain object: every read of process.env is a call into Node, once per variable,
  // and the engine copies it into each agent's environment.
  const env = { ...process.env };
  // Chosen before anything is written: a cap that cannot be applied here is a usage error.
  const supervision = await Supervision.choose({
    env,
    pid: process.pid,
    pidStart,
    caps: { memoryMaxBytes: input.settings.memoryMax, pidsMax: input.settings.pidsMax },
  });
  if (typeof supervision === "string") throw refused(supervision);
  const notes = supervisionNotes(supervision);
  let opened: OpenedRun;
  try {
    opened = await openRun(input, { holder, supervision: supervision.mode, notes });
  } catch (error) {
    supervision.dispose();
    throw error;
  }
  const { paths, worktree, integration, sandbox, place } = opened;
  const releaseAll = () => {
    opened.release();
    supervision.dispose();
  };

  const host = { pid: process.pid, pidStart, hostname: holder.hostname };
  // A parent whose children are engines in this process: one guardian and one Ctrl-Z watch for all their agents.
  const fanMarker =
    input.settings.parallel !== null && !childProcesses(process.env)
      ? { key: FAN_OUT_MARKER_KEY, value: `${input.runId}:${process.pid}:${randomBytes(6).toString("hex")}` }
      : null;
  const guardian = fanMarker ? startGuardian(fanMarker, input.settings.graceMs, supervision.guardianArgs()) : null;
  const engines: ChildHost | null =
    fanMarker && guardian
      ? {
          supervision,
          host,
          env,
          marker: fanMarker,
          guardian,
          sandboxProbe: opened.sandboxProbe,
          onForcedExit: new Set(),
          words,
        }
      : null;
  const signals = watchSignals((signal) => {
    markEndedIfNot(paths.progress, "INTERRUPTED", signal);
    for (const mark of engines?.onForcedExit ?? []) mark(signal);
  });
  const jobControl = fanMarker ? watchJobControl(fanMarker) : null;
  const stopWatchingParent = input.watchParent
    ? watchParentPipe(() => process.kill(process.pid, "SIGTERM"))
    : () => undefined;
  const out = process.stdout;
  const listener = words.view(input, out);
  if (!input.settings.json) for (const line of words.startLines(input, worktree)) out.write(`${line}\n`);
  let result: RunResult;
  let sandboxRefusals: string[];
  try {
    const { parallel, tasks } = input.settings;
    result =
      parallel !== null && tasks !== null && integration
        ? await runFanOut(
            {
              projectDir: input.projectDir,
              runId: input.runId,
              settings: { ...input.settings, parallel, tasks },
              plan: input.plan,
              previous: input.previous,
              notes,
              integration: integration.options,
              supervision: supervision.mode,
            },
            realFanOutIo(input.projectDir, input.runId, integration.place, { env, signals, listener, host }, engines),
          )
        : await runEngine(
            {
              projectDir: input.projectDir,
              runId: input.runId,
              settings: input.settings,
              plan: input.plan,
              previous: input.previous,
              notes,
              workDir: place.dir,
              worktree,
              commit: commitPolicy(input.settings) === "iteration",
              parent: input.settings.parent,
            },
            realIo({
              env,
              signals,
              listener,
              host,
              ...runSpawners(supervision, sandbox),
              supervision: supervision.mode,
              startGuardian: (marker, graceMs) => startGuardian(marker, graceMs, supervision.guardianArgs()),
              watchJobControl,
              commitIteration: commitForEngine(words.worktreeFailure),
            }),
          );
    // Every child engine has ended (the fan-out waits for them): nothing is left for the guardian to guard.
    // Not on a throw: children may still run then, and the guardian ends their trees once this process is gone.
    guardian?.dispose();
  } finally {
    jobControl?.dispose();
    stopWatchingParent();
    listener.close();
    sandboxRefusals = sandbox?.refusedLines() ?? [];
    await sandbox?.close();
    releaseAll();
  }
  if (!input.settings.json) {
    // What the run spent, as the spend ledger has it (status.json is in the agent's reach).
    for (const line of words.endLines(
      input,
      result,
      listener,
      worktree,
      spendOf(input.projectDir, input.runId, env),
      sandboxRefusals,
    ))
      out.write(`${line}\n`);
  }
  // A signal that came after the run had ended (while its last notifications were on their way) does not
  // change how the run ended, but the calling shell must still see ralph die of it.
  const signal = result.reason === "INTERRUPTED" && result.signal ? result.signal : signals.firstSignal();
  if (signal) {
    // Let the summary reach the terminal, but never wait on a pipe nobody reads.
    await new Promise<void>((resolve) => {
      out.write("", () => resolve());
      setTimeout(resolve, 200).unref();
    });
    dieOfSignal(signal);
  }
  signals.dispose();
  return result.exitCode;
}
