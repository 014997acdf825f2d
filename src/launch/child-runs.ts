// The real world of a `--parallel` parent: each child is an engine inside the parent's process (child-engine.ts),
// or with `RALPH_CHILD_RUNS=process` a `ralph run` process of its own, started with a pipe on its stdin that
// closes when the parent dies. A resolve run is always a process of its own (they are rare).
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { readSentinels, requestStop } from "../control/control-files.js";
import { writeFileAtomic } from "../store/atomic-write.js";
import {
  childRuntimeSeconds,
  type ChildExit,
  type ChildHandle,
  type ChildLimits,
  type ChildStart,
  type FanOutIo,
} from "../parallel/fan-out-io.js";
import { runPaths } from "../store/run-paths.js";
import { readStatusFile } from "../store/status-file.js";
import { readEventFile } from "../store/read-events.js";
import { checkCriteria } from "../judge/criteria.js";
import type { IntegrationPlace } from "./integration-place.js";
import { resolvePromptFile } from "./resolve-prompt-file.js";
import { startChildEngine, type ChildHost } from "./child-engine.js";
import {
  commitStaged,
  hasConflictMarkers,
  headOf,
  resetTo,
  stageAllBut,
  startMerge,
  unmergedPaths,
  writeAndStage,
} from "../worktree/integration-git.js";
import { RALPH_MAIN } from "../process/ralph-entry.js";
import { SpendBook } from "../spend/spend-book.js";

const STDERR_KEPT = 4096;

/** Starts child run `start.childId` of `parentId` as `ralph child-run PARENT NAME --task ... --watch-parent`. */
function startChildRun(projectDir: string, parentId: string, start: ChildStart, env: NodeJS.ProcessEnv): ChildHandle {
  // `--flag=value`: a task id may start with "-", and must never be read as an option.
  const args = [
    RALPH_MAIN,
    "child-run",
    parentId,
    start.childId,
    `--task=${start.taskId}`,
    "--watch-parent",
    ...limitArgs(start),
  ];
  return spawnRun(projectDir, args, env);
}

/** A child's or resolve run's share of the parent's limits as `--max-cost` and `--max-runtime` (whole seconds). */
export function limitArgs(limits: ChildLimits): string[] {
  const seconds = childRuntimeSeconds(limits);
  return [
    ...(limits.maxCostUsd !== null ? [`--max-cost=${limits.maxCostUsd}`] : []),
    ...(seconds !== null ? [`--max-runtime=${seconds}s`] : []),
  ];
}

/** Spawns `node args...` as a run whose stdin is a pipe from this process. */
function spawnRun(projectDir: string, args: string[], env: NodeJS.ProcessEnv): ChildHandle {
  const child = spawn(process.execPath, args, { cwd: projectDir, env, stdio: ["pipe", "ignore", "pipe"] });
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    if (stderr.length < STDERR_KEPT) stderr += chunk.toString("utf8");
  });
  child.stdin?.on("error", () => undefined);
  const exited = new Promise<ChildExit>((resolve) => {
    child.on("error", (error) => resolve({ code: null, signal: null, stderr: error.message }));
    child.on("close", (code, signal) => resolve({ code, signal, stderr }));
  });
  return {
    exited,
    signal(signal) {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    },
  };
}

/** The internal switch back to one `ralph run` process per child. */
export const CHILD_RUNS_ENV = "RALPH_CHILD_RUNS";

/** Whether children run as processes of their own (the switch) rather than as engines in the parent. */
export function childProcesses(env: NodeJS.ProcessEnv): boolean {
  return env[CHILD_RUNS_ENV] === "process";
}

/** The fan-out's outside world, with what only the CLI knows passed in; `engines` when children run in this process. */
export function realFanOutIo(
  projectDir: string,
  parentId: string,
  place: IntegrationPlace,
  given: Pick<FanOutIo, "env" | "signals" | "host" | "listener">,
  engines: ChildHost | null,
): FanOutIo {
  const { top } = place;
  return {
    ...given,
    startChild: (start) =>
      engines
        ? startChildEngine(projectDir, parentId, start, engines)
        : startChildRun(projectDir, parentId, start, given.env),
    startResolve(resolveId, prompt, limits) {
      writeFileAtomic(resolvePromptFile(projectDir, parentId, resolveId), prompt);
      return spawnRun(
        projectDir,
        [RALPH_MAIN, "child-run", parentId, resolveId, "--resolve", "--watch-parent", ...limitArgs(limits)],
        given.env,
      );
    },
    merge: {
      head: () => headOf(top),
      startMerge: (branch) => startMerge(top, branch),
      unmerged: () => unmergedPaths(top),
      hasMarkers: (path) => hasConflictMarkers(top, path),
      stageAllBut: (paths) => stageAllBut(top, paths),
      writeTasks: (text) => writeAndStage(top, place.tasksPath, text),
      commit: (message) => commitStaged(top, message),
      resetTo: (commit) => resetTo(top, commit),
      async runChecks() {
        const verdicts = await checkCriteria(place.checks, {
          cwd: place.cwd,
          env: given.env,
          timeoutMs: place.checkTimeoutMs,
          stopAtFirstFailure: true,
        });
        const failing = verdicts.find((verdict) => !verdict.passed);
        return failing
          ? { passed: false, output: `${failing.check}: ${failing.detail}\n${failing.outputTail.slice(-4000)}` }
          : { passed: true, output: "" };
      },
    },
    readEvents: (paths) => readEventFile(paths.events),
    readChildStatus: (childId) => readStatusFile(runPaths(projectDir, childId).status),
    readSentinels,
    stopChild(childId, now) {
      const paths = runPaths(projectDir, childId);
      if (!existsSync(paths.dir)) return false;
      try {
        requestStop(paths, now);
        return true;
      } catch {
        return false;
      }
    },
    now: () => new Date(),
    spend: new SpendBook(given.env),
  };
}
