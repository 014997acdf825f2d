// The one place a failure becomes words and an exit code: bad input (a usage error, a refused launch, a planted
// run file, an unwritable project) exits 2; a full disk exits 1; anything else is a bug of ralph's, exit 1.
import { isAbsolute, relative } from "node:path";
import { LaunchFailure, type OpeningProblem } from "../launch/launch-failure.js";
import { RunFileError } from "../store/regular-file.js";
import { renderPreflight } from "./render-preflight.js";
import { renderWorktreeFailure } from "./render-worktree.js";
import { UsageError } from "./usage-error.js";

/** A refused launch in words. */
function launchLine(problem: LaunchFailure["problem"]): string {
  switch (problem.kind) {
    case "refused":
      return problem.message;
    case "worktree":
      return `${problem.flag}: ${renderWorktreeFailure(problem.failure)}`;
    case "preflight":
      return renderPreflight(problem.problem);
    case "opening":
      return openingLine(problem.problem);
    default: {
      const unreachable: never = problem;
      throw new Error(`unknown launch failure ${JSON.stringify(unreachable)}`);
    }
  }
}

/** A run that could not be opened, and what to do. */
function openingLine(problem: OpeningProblem): string {
  switch (problem.kind) {
    case "not-writable":
      return `cannot create ${problem.what} (${problem.code}): the project must be writable`;
    case "run-exists":
      return `--name ${problem.runId}: a run with this id already exists (use ralph continue ${problem.runId})`;
    case "project-busy":
      return `another run is active in this project (${problem.runId ?? "unknown"}, pid ${problem.pid ?? "?"}); stop it, or give --name to run several`;
    case "run-driven":
      return `run ${problem.runId} is being driven by another runner (pid ${problem.pid ?? "?"})`;
    default: {
      const unreachable: never = problem;
      throw new Error(`unknown opening problem ${JSON.stringify(unreachable)}`);
    }
  }
}

/** How a failure is said (one line, without the `ralph: ` prefix) and the exit code it ends ralph with. */
export interface SaidFailure {
  code: number;
  line: string;
  /** Bad input, worded as such: the quick paths answer it themselves. */
  input: boolean;
}

/** Words `error`; `stack` adds the stack of an internal error (the full CLI shows it, a child's stderr does not). */
export function sayFailure(error: unknown, stack = true): SaidFailure {
  if (error instanceof LaunchFailure) {
    const { problem } = error;
    return { code: 2, line: launchLine(problem), input: true };
  }
  if (error instanceof UsageError || error instanceof RunFileError)
    return { code: 2, line: error.message, input: true };
  const code = (error as NodeJS.ErrnoException | null)?.code;
  // A full disk before the run could start (a started run records it as FAILED "disk full" itself).
  if (code === "ENOSPC" || code === "EDQUOT")
    return { code: 1, line: `disk full: ${(error as Error).message}`, input: false };
  const path = (error as NodeJS.ErrnoException | null)?.path;
  if ((code === "EROFS" || code === "EACCES" || code === "EPERM") && path !== undefined) {
    // A read-only or someone else's project: bad input, not a bug of ralph's.
    const shown = relative(process.cwd(), path);
    const where = shown === "" || shown.startsWith("..") || isAbsolute(shown) ? path : shown;
    const why = code === "EROFS" ? "the file system is read-only" : "permission denied";
    return {
      code: 2,
      line: `cannot write ${where} (${code}: ${why}): ralph needs a writable project directory`,
      input: false,
    };
  }
  const text = stack
    ? ((error as Error | null)?.stack ?? String(error))
    : ((error as Error | null)?.message ?? String(error));
  return { code: 1, line: `internal error: ${text}`, input: false };
}
