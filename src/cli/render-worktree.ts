// All user-facing wording of worktree failures, clean results and orphaned worktrees.
import type { Cleaned } from "../worktree/clean-worktree.js";
import type { OrphanWorktree } from "../worktree/orphan-worktrees.js";
import type { WorktreeFailure } from "../worktree/worktree-failure.js";

const SHOWN_CHANGES = 5;

/** One or more lines saying what went wrong and what to do. */
export function renderWorktreeFailure(failure: WorktreeFailure): string {
  switch (failure.kind) {
    case "not-a-repo":
      return `${failure.dir} is not in a git repository (${failure.detail}); --worktree needs one (git init, then a first commit)`;
    case "no-commit":
      return `the repository at ${failure.top} has no commit yet; a worktree starts from HEAD, so make a first commit`;
    case "branch-exists":
      return `branch ${failure.branch} already exists (from an earlier run of that name); choose another --name or delete the branch`;
    case "bad-branch-name":
      return `${failure.branch} is not a name git allows for a branch; choose another --name`;
    case "path-exists":
      return `${failure.path} already exists; choose another --name, or see ralph doctor for leftover worktrees`;
    case "worktree-gone":
      return `the worktree ${failure.path} is gone (deleted or pruned); ${
        failure.branchKept
          ? `its branch ${failure.branch} is kept: git worktree add ${failure.path} ${failure.branch} brings it back`
          : `its branch ${failure.branch} is gone too`
      }`;
    case "not-a-worktree":
      return `${failure.path} is not a git worktree of this repository (${failure.detail}); look at it, then remove it yourself if nothing there is needed`;
    case "wrong-branch":
      return `the worktree ${failure.path} is on ${failure.actual ?? "a detached HEAD"}, not ${failure.expected}; check out ${failure.expected} there first`;
    case "operation-in-progress":
      return `${failure.operation} is in progress in ${failure.path}; finish or abort it there (ralph commits nothing meanwhile)`;
    case "no-author":
      return `git does not know who commits: set ${failure.missing.join(" and ")} (git config --global ${failure.missing[0] ?? "user.name"} ...), or use --commit off`;
    case "run-live":
      return `run ${failure.runId} is still running; stop it first (ralph stop ${failure.runId}), then clean`;
    case "uncommitted": {
      const shown = failure.changes.slice(0, SHOWN_CHANGES).map((line) => `  ${line}`);
      const more =
        failure.changes.length > SHOWN_CHANGES ? [`  … and ${failure.changes.length - SHOWN_CHANGES} more`] : [];
      return [
        `${failure.path} has ${failure.changes.length} uncommitted change(s); commit them there, or clean --force to discard them:`,
        ...shown,
        ...more,
      ].join("\n");
    }
    case "no-worktree":
      return `run ${failure.runId} has no worktree (${failure.path}): it did not run with --worktree, or it was cleaned already`;
    case "git-failed":
      return `${failure.command} failed: ${failure.detail}`;
    default: {
      const never: never = failure;
      return String(never);
    }
  }
}

/** What `ralph clean` did and what it kept. */
export function renderCleaned(runId: string, cleaned: Cleaned): string {
  const lines = [
    cleaned.directoryWasGone
      ? `run ${runId}: its worktree ${cleaned.path} was already deleted; removed git's record of it`
      : `run ${runId}: removed the worktree ${cleaned.path}${cleaned.discarded.length > 0 ? ` (discarded ${cleaned.discarded.length} uncommitted change(s))` : ""}`,
  ];
  if (cleaned.branch === null) lines.push("no branch was kept (the worktree had none)");
  else {
    const ahead = cleaned.aheadOfHead === null ? "" : `, ${cleaned.aheadOfHead} commit(s) not in your HEAD`;
    lines.push(`kept branch ${cleaned.branch} at ${cleaned.branchHead?.slice(0, 12) ?? "?"}${ahead}`);
    lines.push(
      `review: git log HEAD..${cleaned.branch}   take it: git merge ${cleaned.branch}   drop it: git branch -D ${cleaned.branch}`,
    );
  }
  return lines.join("\n");
}

const PROBLEMS: Record<OrphanWorktree["problem"], string> = {
  "run-gone": "its run directory is gone",
  "directory-gone": "its directory is gone but git still records it",
  "unknown-to-git": "git does not know it as a worktree",
};

/** Doctor's worktrees section: one line per orphan with what to do, or that there are none. */
export function renderOrphans(orphans: readonly OrphanWorktree[]): string[] {
  if (orphans.length === 0) return ["worktrees    no orphaned worktrees under .ralph/worktrees"];
  return [
    `worktrees    ${orphans.length} orphaned under .ralph/worktrees (nothing is deleted without you):`,
    ...orphans.map((orphan) => {
      const fix =
        orphan.problem === "unknown-to-git"
          ? "look at it, then remove it yourself"
          : `ralph clean ${orphan.id} removes it and keeps its branch`;
      return `  ${orphan.id}  ${PROBLEMS[orphan.problem]}${orphan.branch ? ` (branch ${orphan.branch})` : ""}; ${fix}`;
    }),
  ];
}
