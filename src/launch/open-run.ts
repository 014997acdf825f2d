// Opening a run before its loop starts: its work place, run directory, locks, ledger record and sandbox,
// for a run of its own process (start-run.ts) and for a `--parallel` child inside its parent's (child-engine.ts).
import { mkdirSync } from "node:fs";
import { join, relative } from "node:path";
import { firstStatus } from "../engine/run-engine.js";
import { createRunDir, RunDirExists } from "../store/create-run-dir.js";
import { renderPlan } from "../store/plan-file.js";
import { isRunnerAlive } from "../control/runner-alive.js";
import type { SupervisionMode } from "../process/supervision.js";
import { writeFileAtomic } from "../store/atomic-write.js";
import { acquireLock, type LockHolder } from "../control/lock-file.js";
import {
  fileDigest,
  projectLockHolders,
  recordRunCreated,
  thisRunner,
  updateLedgerEntry,
} from "../control/run-ledger.js";
import { projectLockPath, runDirProblem, runPaths, type RunPaths } from "../store/run-paths.js";
import type { RunStatus } from "../store/status-file.js";
import type { StartRunInput } from "./start-run-input.js";
import { LaunchFailure, refused, type OpeningProblem } from "./launch-failure.js";
import { excludeRunFiles } from "../worktree/exclude-run-files.js";
import { creationFacts } from "./creation-facts.js";
import { openIntegration } from "./integration-place.js";
import { openWorkPlace, type WorkPlace } from "./run-worktree.js";
import { probeRunSandbox, sandboxNotes } from "./run-sandbox.js";
import { Sandbox } from "../sandbox/sandbox.js";
import type { AgentName } from "../agents/types.js";

/** A run that cannot be opened. */
function opening(problem: OpeningProblem): LaunchFailure {
  return new LaunchFailure({ kind: "opening", problem });
}

/** A run ready for its loop; `release()` gives back its locks and closes its record (never twice). */
export interface OpenedRun {
  paths: RunPaths;
  place: WorkPlace;
  worktree: { path: string; branch: string; base: string | null; baseBranch: string | null } | null;
  integration: Awaited<ReturnType<typeof openIntegration>> | null;
  sandbox: Sandbox | null;
  /** What the sandbox probe found (null: the run is not sandboxed); a `--parallel` parent hands it to its children. */
  sandboxProbe: RunSandboxProbe;
  release(): void;
}

/** Who opens the run: its runner's lock identity, its supervision, where notes go, how a warning is said. */
export interface Opener {
  holder: LockHolder;
  supervision: SupervisionMode;
  notes: string[];
  warn?: (line: string) => void;
  /** The probe already made for this run's settings (a child engine: its parent's); probed here when absent. */
  sandboxProbe?: RunSandboxProbe;
}

type RunSandboxProbe = ReturnType<typeof probeRunSandbox>;

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
    throw opening({ kind: "not-writable", what: join(projectDir, ".ralph", "runs"), code });
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
    if (error instanceof RunDirExists) throw opening({ kind: "run-exists", runId: input.runId });
    const code = (error as NodeJS.ErrnoException).code ?? "error";
    if (code === "ENOSPC" || code === "EDQUOT") throw error; // reported as a full disk, exit 1
    throw opening({ kind: "not-writable", what: `the run directory of ${input.runId}`, code });
  }
}

/** Opens run `input.runId`: everything before its loop, undone again when a step fails. */
export async function openRun(input: StartRunInput, opener: Opener): Promise<OpenedRun> {
  const { holder, notes } = opener;
  const paths = runPaths(input.projectDir, input.runId);
  const releases: Array<() => void> = [];
  const release = () =>
    releases
      .splice(0)
      .reverse()
      .forEach((step) => step());
  // Before anything is written: `--sandbox` where no sandbox can be built is a usage error.
  // Probing runs bubblewrap synchronously: a child engine, in its parent's process, takes its parent's probe.
  const sandboxProbe =
    opener.sandboxProbe !== undefined ? opener.sandboxProbe : probeRunSandbox(input.settings, process.env, opener.warn);
  let place: WorkPlace | null = null;
  let integration: Awaited<ReturnType<typeof openIntegration>> | null = null;
  try {
    const problem = runDirProblem(input.projectDir, input.runId);
    if (problem) throw refused(problem);
    place = await openWorkPlace(input.projectDir, input.runId, input.settings, input.previous !== null);
    makeRunDirs(input.projectDir);
    // A child's parent has already made git ignore the project's .ralph/.
    const excluded = input.settings.parent === null ? await excludeRunFiles(input.projectDir) : null;
    if (excluded)
      notes.push(
        `git now ignores .ralph/ here (added to ${relative(input.projectDir, excluded)}, which is never committed): run files stay out of git add`,
      );
    if (input.projectLock) {
      const lock = acquireLock(projectLockPath(input.projectDir), holder, isRunnerAlive);
      if (!lock.ok) {
        throw opening({ kind: "project-busy", runId: lock.holder?.run_id ?? null, pid: lock.holder?.pid ?? null });
      }
      releases.push(lock.release);
      // The lock file is in the project, where the agent can delete it: the runners' records say it too.
      const other = projectLockHolders(input.projectDir, isRunnerAlive).find(
        (entry) => entry.run_id !== input.runId && entry.runner?.pid !== holder.pid,
      );
      if (other) throw opening({ kind: "project-busy", runId: other.run_id, pid: other.runner?.pid ?? null });
      if (lock.tookOverFrom)
        notes.push(
          `took over the project lock left by dead runner pid ${lock.tookOverFrom.pid} (run ${lock.tookOverFrom.run_id})`,
        );
    }
    if (!input.previous) {
      const status = firstStatus(
        { ...input, worktree: place.worktree, parent: input.settings.parent },
        { pid: holder.pid, pidStart: holder.pid_start, hostname: holder.hostname },
        new Date(),
        opener.supervision,
      );
      // Before any agent runs: the remotes `land --push NAME` pushes to, the scripts the person's commands run.
      const found = await creationFacts(input, place);
      recordRunCreated(
        paths.dir,
        input.runId,
        settingsText(input.settings),
        thisRunner(holder.pid_start, input.projectLock),
        process.env,
        found,
      );
      createNewRun(input, status);
    }
    const lock = acquireLock(paths.lock, holder, isRunnerAlive);
    if (!lock.ok) throw opening({ kind: "run-driven", runId: input.runId, pid: lock.holder?.pid ?? null });
    releases.push(lock.release);
    if (lock.tookOverFrom) notes.push(`took over the run lock left by dead runner pid ${lock.tookOverFrom.pid}`);
    // Once this runner is done (or refused), its record says so, with the status it leaves for `ralph continue`.
    releases.push(() => updateLedgerEntry(paths.dir, { runner: null, status_sha256: fileDigest(paths.status) }));
    // Once the run's lock is held: continuing, what a killed parent left half merged is undone here.
    if (input.settings.parallel !== null)
      integration = await openIntegration(input.projectDir, input.runId, input.settings, input.plan, place);
    input.prepare?.();
    // A continued run is live from here: only after `prepare` moved the old STOP aside, so that a stop asked of
    // this runner (taken once its record names it) is never moved aside with it.
    if (input.previous) {
      writeFileAtomic(paths.settings, settingsText(input.settings));
      updateLedgerEntry(paths.dir, {
        settings_sha256: fileDigest(paths.settings),
        status_sha256: null,
        runner: thisRunner(holder.pid_start, input.projectLock),
      });
    }
  } catch (error) {
    release();
    await place?.undo();
    throw error;
  }
  const worktree = place.worktree
    ? {
        path: place.worktree.path,
        branch: place.worktree.branch,
        base: place.base?.commit ?? null,
        baseBranch: place.base?.branch ?? null,
      }
    : null;
  let sandbox: Sandbox | null;
  try {
    sandbox =
      sandboxProbe === null
        ? null
        : await Sandbox.open(sandboxProbe, input.settings.sandbox, {
            agent: input.settings.agent,
            env: process.env,
            projectDir: input.projectDir,
            workDir: place.dir,
            reviewers: reviewAgents(input.plan),
          });
  } catch (error) {
    release();
    throw error;
  }
  notes.push(...sandboxNotes(input.settings, sandbox, process.env));
  return { paths, place, worktree, integration, sandbox, sandboxProbe, release };
}
