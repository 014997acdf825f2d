// Why a worktree could not be created, reused, committed in or cleaned: values rendered by src/cli.

/** One expected failure of the worktree functions. */
export type WorktreeFailure =
  | { kind: "not-a-repo"; dir: string; detail: string }
  | { kind: "no-commit"; top: string }
  | { kind: "branch-exists"; branch: string }
  | { kind: "bad-branch-name"; branch: string }
  | { kind: "path-exists"; path: string }
  | { kind: "worktree-gone"; path: string; branch: string; branchKept: boolean }
  | { kind: "not-a-worktree"; path: string; detail: string }
  | { kind: "wrong-branch"; path: string; expected: string; actual: string | null }
  | { kind: "operation-in-progress"; path: string; operation: string }
  | { kind: "no-author"; missing: string[] }
  | { kind: "run-live"; runId: string }
  | { kind: "uncommitted"; path: string; changes: string[] }
  | { kind: "no-worktree"; runId: string; path: string }
  | { kind: "git-failed"; command: string; detail: string };

/** A result that is either a value or a failure. */
export type WorktreeOutcome<T> = ({ ok: true } & T) | { ok: false; failure: WorktreeFailure };

/** A failure outcome. */
export function failed(failure: WorktreeFailure): { ok: false; failure: WorktreeFailure } {
  return { ok: false, failure };
}

/** A git-failed failure for `git args` that ended with `detail`. */
export function gitFailed(args: readonly string[], detail: string): { ok: false; failure: WorktreeFailure } {
  return failed({ kind: "git-failed", command: `git ${args.join(" ")}`, detail });
}
