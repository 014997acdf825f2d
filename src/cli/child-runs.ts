// The real world of a `--parallel` parent: each child is a `ralph run` process of its own, started with a
// pipe on its stdin that closes when the parent dies, so a SIGKILLed parent still ends every child's tree.
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { readSentinels, requestStop } from "../control/control-files.js";
import { markTaskDone } from "../judge/mark-task-done.js";
import { loadTasks } from "../judge/tasks.js";
import type { ChildExit, ChildHandle, ChildStart, FanOutIo } from "../parallel/fan-out-io.js";
import { runPaths } from "../store/run-paths.js";
import { readStatusFile } from "../store/status-file.js";

const MAIN = fileURLToPath(new URL("./main.js", import.meta.url));
const STDERR_KEPT = 4096;

/** Starts child run `start.childId` of `parentId` as `ralph run --parent ... --task ... --watch-parent`. */
function startChildRun(projectDir: string, parentId: string, start: ChildStart, env: NodeJS.ProcessEnv): ChildHandle {
  // `--flag=value`: a task id may start with "-", and must never be read as an option.
  const args = [MAIN, "run", `--parent=${parentId}`, `--task=${start.taskId}`, `--name=${start.childId}`, "--watch-parent"];
  if (start.maxCostUsd !== null) args.push(`--max-cost=${start.maxCostUsd}`);
  if (start.maxRuntimeMs !== null) args.push(`--max-runtime=${Math.max(1, Math.ceil(start.maxRuntimeMs / 1000))}s`);
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

/** The fan-out's outside world, with what only the CLI knows passed in. */
export function realFanOutIo(projectDir: string, parentId: string, given: Pick<FanOutIo, "env" | "signals" | "host" | "listener">): FanOutIo {
  return {
    ...given,
    startChild: (start) => startChildRun(projectDir, parentId, start, given.env),
    readTasks: loadTasks,
    markTaskDone,
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
  };
}
