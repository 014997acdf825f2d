// The one place a failure becomes words and an exit code: bad input (a usage error, a refused launch, a planted
// run file, an unwritable project) exits 2; a full disk exits 1; anything else is a bug of ralph's, exit 1.
import { isAbsolute, relative } from "node:path";
import { LaunchFailure } from "../launch/launch-failure.js";
import { RunFileError } from "../store/regular-file.js";
import { renderPreflight } from "./render-preflight.js";
import { renderWorktreeFailure } from "./render-worktree.js";
import { UsageError } from "./usage-error.js";

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
    const line = problem.kind === "refused" ? problem.message : problem.kind === "worktree" ? `${problem.flag}: ${renderWorktreeFailure(problem.failure)}` : renderPreflight(problem.problem);
    return { code: 2, line, input: true };
  }
  if (error instanceof UsageError || error instanceof RunFileError) return { code: 2, line: error.message, input: true };
  const code = (error as NodeJS.ErrnoException | null)?.code;
  // A full disk before the run could start (a started run records it as FAILED "disk full" itself).
  if (code === "ENOSPC" || code === "EDQUOT") return { code: 1, line: `disk full: ${(error as Error).message}`, input: false };
  const path = (error as NodeJS.ErrnoException | null)?.path;
  if ((code === "EROFS" || code === "EACCES" || code === "EPERM") && path !== undefined) {
    // A read-only or someone else's project: bad input, not a bug of ralph's.
    const shown = relative(process.cwd(), path);
    const where = shown === "" || shown.startsWith("..") || isAbsolute(shown) ? path : shown;
    const why = code === "EROFS" ? "the file system is read-only" : "permission denied";
    return { code: 2, line: `cannot write ${where} (${code}: ${why}): ralph needs a writable project directory`, input: false };
  }
  const text = stack ? ((error as Error | null)?.stack ?? String(error)) : ((error as Error | null)?.message ?? String(error));
  return { code: 1, line: `internal error: ${text}`, input: false };
}
