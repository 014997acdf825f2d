// `ralph clean RUN`: removes an ended run's worktree, keeping its branch and saying where it is.
import { existsSync } from "node:fs";
import { failed, gitFailed, type WorktreeOutcome } from "./worktree-failure.js";
import { checkWorktree } from "./open-worktree.js";
import { listRecordedWorktrees } from "./list-worktrees.js";
import { currentBranch, EVERYTHING_BUT_RALPH, realPath, worktreePath } from "./worktree-location.js";
import { runGit } from "./run-git.js";

/** What clean did: the worktree removed (or only its stale record), the branch kept and its commits not in HEAD. */
export interface Cleaned {
  path: string;
  directoryWasGone: boolean;
  discarded: string[];
  branch: string | null;
  branchHead: string | null;
  aheadOfHead: number | null;
}

/**
 * The changes `git status` shows in a worktree as porcelain lines, and every file under a `.ralph`
 * directory there, ignored or not, except ralph's own layout (`.ralph/runs`, `.ralph/worktrees`, lock files):
 * ralph never commits them, so anything else there is the agent's or a person's, and would be lost.
 */
export async function uncommittedChanges(path: string): Promise<WorktreeOutcome<{ changes: string[] }>> {
  const changes: string[] = [];
  const commands = [
    ["status", "--porcelain=v1", "--untracked-files=all", "--", ...EVERYTHING_BUT_RALPH],
    // ralph's own layout (runs/, worktrees/ and the project lock at the top) is not the person's work.
    [
      "status",
      "--porcelain=v1",
      "--untracked-files=all",
      "--ignored=traditional",
      "--",
      ":(top,glob)**/.ralph/**",
      ":(top,exclude).ralph/runs",
      ":(top,exclude).ralph/worktrees",
      ":(top,exclude).ralph/*.lock",
    ],
  ];
  for (const args of commands) {
    const status = await runGit(path, args);
    if (!status.ok) return gitFailed(args, status.stderr);
    changes.push(...status.stdout.split("\n").filter((line) => line !== ""));
  }
  return { ok: true, changes };
}

/**
 * Removes run `runId`'s worktree. Refused while the run is live, and when it holds uncommitted changes
 * unless `force`. The branch `ralph/<id>` and its commits stay: merging them is the person's decision.
 */
export async function cleanWorktree(
  projectDir: string,
  runId: string,
  { force, live }: { force: boolean; live: boolean },
): Promise<WorktreeOutcome<Cleaned>> {
  if (live) return failed({ kind: "run-live", runId });
  const path = worktreePath(projectDir, runId);
  let discarded: string[] = [];
  let branch: string | null;
  const directoryWasGone = !existsSync(path);
  if (directoryWasGone) {
    // Deleted by hand: git still records it until the record is removed; nothing else is left to lose.
    const recorded = (await listRecordedWorktrees(projectDir)).find(
      (worktree) => realPath(worktree.path) === realPath(path),
    );
    if (!recorded) return failed({ kind: "no-worktree", runId, path });
    branch = recorded.branch;
  } else {
    const checked = await checkWorktree(projectDir, path);
    if (!checked.ok) return checked;
    const status = await uncommittedChanges(path);
    if (!status.ok) return status;
    if (status.changes.length > 0 && !force) return failed({ kind: "uncommitted", path, changes: status.changes });
    discarded = status.changes;
    branch = await currentBranch(path);
  }
  // --force lets git drop ralph's own untracked files and a directory already gone; the check above decided.
  const args = ["worktree", "remove", "--force", path];
  const removed = await runGit(projectDir, args);
  if (!removed.ok) return gitFailed(args, removed.stderr);
  const head =
    branch === null ? null : await runGit(projectDir, ["rev-parse", "--verify", "-q", `refs/heads/${branch}`]);
  if (branch === null || !head?.ok)
    return { ok: true, path, directoryWasGone, discarded, branch: null, branchHead: null, aheadOfHead: null };
  const ahead = await runGit(projectDir, ["rev-list", "--count", `HEAD..refs/heads/${branch}`]);
  return {
    ok: true,
    path,
    directoryWasGone,
    discarded,
    branch,
    branchHead: head.stdout.trim(),
    aheadOfHead: ahead.ok ? Number(ahead.stdout.trim()) : null,
  };
}
