// Runs the loop in the foreground with the real world wired in: locks, processes, signals, guardian, terminal.
import { mkdirSync } from "node:fs";
import { hostname } from "node:os";
import { join, relative } from "node:path";
import { realIo } from "../engine/engine-io.js";
import { firstStatus, runEngine } from "../engine/run-engine.js";
import { markEndedIfNot, type RunResult } from "../run/finish-run.js";
import { createRunDir, RunDirExists } from "../store/create-run-dir.js";
import { renderPlan } from "../store/plan-file.js";
import { startGuardian } from "../process/guardian.js";
import { watchJobControl } from "../process/job-control.js";
import { readProcess } from "../process/proc-table.js";
import { isRunnerAlive } from "../control/runner-alive.js";
import { dieOfSignal, watchSignals } from "../process/signals.js";
import { Supervision } from "../process/supervision.js";
import { writeFileAtomic } from "../store/atomic-write.js";
import { acquireLock, type LockHolder } from "../control/lock-file.js";
import { fileDigest, projectLockHolders, recordRunCreated, thisRunner, updateLedgerEntry } from "../control/run-ledger.js";
import { projectLockPath, runDirProblem, runPaths } from "../store/run-paths.js";
import type { RunStatus } from "../store/status-file.js";
import { readStatusFile } from "../store/status-file.js";
import { createRenderer, summaryLines } from "./render.js";
import { startLines } from "./start-lines.js";
import type { StartRunInput } from "./start-run-input.js";
import { UsageError } from "./usage-error.js";
import { watchParentPipe } from "../process/parent-pipe.js";
import { runFanOut } from "../parallel/fan-out.js";
import { realFanOutIo } from "./child-runs.js";
import { excludeRunFiles } from "../worktree/exclude-run-files.js";
import { openIntegration } from "./integration-place.js";
import { commitForEngine, commitPolicy, openWorkPlace, type WorkPlace } from "./run-worktree.js";
import { probeRunSandbox, sandboxNotes } from "./run-sandbox.js";
import { Sandbox } from "../sandbox/sandbox.js";
import type { AgentName } from "../agents/types.js";

export type { StartRunInput } from "./start-run-input.js";

/** The agents of the plan's review criteria. */
function reviewAgents(plan: StartRunInput["plan"]): AgentName[] {
  return plan.completionCriteria.flatMap((criterion) => (criterion.review ? [criterion.review.agent] : []));
}

/** Creates `.ralph/runs` (0700); a project where it cannot be created is a usage error, not a crash. */
function makeRunDirs(projectDir: string): void {
  try {
    // One level at a time: a recursive mkdir reports ENOENT on a read-only filesystem instead of EROFS.
    for (const dir of [join(projectDir, ".ralph"), join(projectDir, ".ralph", "runs")]) {
      try {
        mkdirSync(dir, { mode: 0o700 });
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      }
    }
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? "error";
    if (code === "ENOSPC" || code === "EDQUOT") throw error; // reported as a full disk, exit 1
    throw new UsageError(`cannot create ${join(projectDir, ".ralph", "runs")} (${code}): the project must be writable`);
  }
}

/** settings.json as ralph writes it. */
function settingsText(settings: StartRunInput["settings"]): string {
  return `${JSON.stringify(settings, null, 2)}\n`;
}

/** Creates a new run's directory with its first state.md, status.json and settings.json, all at once. */
function createNewRun(input: StartRunInput, status: RunStatus): void {
  try {
    createRunDir(input.projectDir, input.runId, {
      "state.md": renderPlan(input.plan),
      "status.json": `${JSON.stringify(status, null, 2)}\n`,
      "settings.json": settingsText(input.settings),
    });
  } catch (error) {
    if (error instanceof RunDirExists) throw new UsageError(`--name ${input.runId}: a run with this id already exists (use ralph continue ${input.runId})`);
    const code = (error as NodeJS.ErrnoException).code ?? "error";
    if (code === "ENOSPC" || code === "EDQUOT") throw error; // reported as a full disk, exit 1
    throw new UsageError(`cannot create the run directory of ${input.runId} (${code}): the project must be writable`);
  }
}

/** Runs the loop and returns the exit code; on a signal the process dies of that signal instead. */
export async function startRun(input: StartRunInput): Promise<number> {
  const pidStart = readProcess(process.pid)?.startTime ?? null;
  const holder: LockHolder = { pid: process.pid, pid_start: pidStart, hostname: hostname(), run_id: input.runId, acquired_at: new Date().toISOString() };
  const paths = runPaths(input.projectDir, input.runId);
  const notes: string[] = [];
  const releases: Array<() => void> = [];
  const releaseAll = () => releases.splice(0).reverse().forEach((release) => release());
  // Chosen before anything is written: a cap that cannot be applied here is a usage error.
  const supervision = await Supervision.choose({
    env: process.env,
    pid: process.pid,
    pidStart,
    caps: { memoryMaxBytes: input.settings.memoryMax, pidsMax: input.settings.pidsMax },
  });
  if (typeof supervision === "string") throw new UsageError(supervision);
  releases.push(() => supervision.dispose());
  notes.push(`supervision: ${supervision.mode} (${supervision.report.why})`);
  // Also before anything is written: `--sandbox` where no sandbox can be built is a usage error.
  const sandboxProbe = probeRunSandbox(input.settings, process.env);
  for (const [name, source] of Object.entries(supervision.report.controllers)) if (source.startsWith("unavailable")) notes.push(`${name} figures and cap ${source}`);
  let place: WorkPlace | null = null;
  let integration: Awaited<ReturnType<typeof openIntegration>> | null = null;
  try {
    const problem = runDirProblem(input.projectDir, input.runId);
    if (problem) throw new UsageError(problem);
    place = await openWorkPlace(input.projectDir, input.runId, input.settings, input.previous !== null);
    makeRunDirs(input.projectDir);
    const excluded = await excludeRunFiles(input.projectDir);
    if (excluded) notes.push(`git now ignores .ralph/ here (added to ${relative(input.projectDir, excluded)}, which is never committed): run files stay out of git add`);
    if (input.projectLock) {
      const lock = acquireLock(projectLockPath(input.projectDir), holder, isRunnerAlive);
      if (!lock.ok) {
        throw new UsageError(`another run is active in this project (${lock.holder?.run_id ?? "unknown"}, pid ${lock.holder?.pid ?? "?"}); stop it, or give --name to run several`);
      }
      releases.push(lock.release);
      // The lock file is in the project, where the agent can delete it: the runners' records say it too.
      const other = projectLockHolders(input.projectDir, isRunnerAlive).find((entry) => entry.run_id !== input.runId && entry.runner?.pid !== process.pid);
      if (other) throw new UsageError(`another run is active in this project (${other.run_id}, pid ${other.runner?.pid ?? "?"}); stop it, or give --name to run several`);
      if (lock.tookOverFrom) notes.push(`took over the project lock left by dead runner pid ${lock.tookOverFrom.pid} (run ${lock.tookOverFrom.run_id})`);
    }
    if (!input.previous) {
      const status = firstStatus({ ...input, worktree: place.worktree, parent: input.settings.parent }, { pid: process.pid, pidStart, hostname: holder.hostname }, new Date(), supervision.mode);
      recordRunCreated(paths.dir, input.runId, settingsText(input.settings), thisRunner(pidStart, input.projectLock));
      createNewRun(input, status);
    }
    const lock = acquireLock(paths.lock, holder, isRunnerAlive);
    if (!lock.ok) throw new UsageError(`run ${input.runId} is being driven by another runner (pid ${lock.holder?.pid ?? "?"})`);
    releases.push(lock.release);
    if (lock.tookOverFrom) notes.push(`took over the run lock left by dead runner pid ${lock.tookOverFrom.pid}`);
    if (input.previous) {
      writeFileAtomic(paths.settings, settingsText(input.settings));
      updateLedgerEntry(paths.dir, { settings_sha256: fileDigest(paths.settings), status_sha256: null, runner: thisRunner(pidStart, input.projectLock) });
    }
    // Once this runner is done (or refused), its record says so, with the status it leaves for `ralph continue`.
    releases.push(() => updateLedgerEntry(paths.dir, { runner: null, status_sha256: fileDigest(paths.status) }));
    // Once the run's lock is held: continuing, what a killed parent left half merged is undone here.
    if (input.settings.parallel !== null) integration = await openIntegration(input.projectDir, input.runId, input.settings, input.plan, place);
    input.prepare?.();
  } catch (error) {
    releaseAll();
    await place?.undo();
    throw error;
  }
  const worktree = place.worktree ? { path: place.worktree.path, branch: place.worktree.branch, base: place.base?.commit ?? null, baseBranch: place.base?.branch ?? null } : null;
  let sandbox: Sandbox | null = null;
  try {
    sandbox = sandboxProbe === null ? null : await Sandbox.open(sandboxProbe, input.settings.sandbox, { agent: input.settings.agent, env: process.env, projectDir: input.projectDir, workDir: place.dir, reviewers: reviewAgents(input.plan) });
  } catch (error) {
    releaseAll();
    throw error;
  }
  notes.push(...sandboxNotes(input.settings, sandbox, process.env));

  const signals = watchSignals(() => markEndedIfNot(paths.progress, "INTERRUPTED"));
  const stopWatchingParent = input.watchParent ? watchParentPipe(() => process.kill(process.pid, "SIGTERM")) : () => undefined;
  const out = process.stdout;
  const listener = createRenderer({ json: input.settings.json, live: input.settings.live, maxIterations: input.plan.maxIterations }, out);
  if (!input.settings.json) for (const line of startLines({ ...input, worktree })) out.write(`${line}\n`);
  let result: RunResult;
  try {
    const host = { pid: process.pid, pidStart, hostname: holder.hostname };
    const { parallel, tasks } = input.settings;
    result = parallel !== null && tasks !== null && integration
      ? await runFanOut(
          { projectDir: input.projectDir, runId: input.runId, settings: { ...input.settings, parallel, tasks }, plan: input.plan, previous: input.previous, notes, integration: integration.options },
          realFanOutIo(input.projectDir, input.runId, integration.place, { env: process.env, signals, listener, host }),
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
        env: process.env,
        signals,
        listener,
        host: { pid: process.pid, pidStart, hostname: holder.hostname },
        spawnAgent: (options) => (sandbox ? sandbox.spawn(options, (wrapped) => supervision.spawn(wrapped)) : supervision.spawn(options)),
        ...(sandbox ? { sandbox, spawnOwn: (options) => supervision.spawn(options) } : {}),
        // A reviewer sees the work tree read-only: in the sandbox, mounted so.
        spawnReviewer: (options, agent) => (sandbox ? sandbox.spawn(options, (wrapped) => supervision.spawn(wrapped), { readOnly: true, agent }) : supervision.spawn(options)),
        supervision: supervision.mode,
        startGuardian: (marker, graceMs) => startGuardian(marker, graceMs, supervision.guardianArgs()),
        watchJobControl,
        commitIteration: commitForEngine,
      }),
    );
  } finally {
    stopWatchingParent();
    listener.close();
    await sandbox?.close();
    releaseAll();
  }
  if (!input.settings.json) {
    const parallel = input.settings.parallel !== null;
    const view = { temporary: input.temporary === true, agent: input.settings.agent, dryRun: input.settings.dryRun, costReported: listener.costReported || (parallel && result.costUsd > 0), tokens: readStatusFile(paths.status)?.tokens ?? null, maxIterations: input.plan.maxIterations, parallel };
    const review = input.temporary
      ? []
      : worktree
      ? [`branch ${worktree.branch} (worktree ${worktree.path}): review with git log -p HEAD..${worktree.branch}; merging it is your decision`, `report: ralph report ${input.runId}; merge it into your branch: ralph land ${input.runId} (--push REMOTE, --pr)`]
      : [`report: ralph report ${input.runId}`];
    for (const line of [...summaryLines(result, view), ...review, ...(input.epilogue?.(result) ?? [])]) out.write(`${line}\n`);
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
