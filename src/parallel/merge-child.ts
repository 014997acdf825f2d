// Merges one DONE child's branch into the integration worktree: conflicts and failing checks become resolve
// iterations of the agent, at most `maxResolve`; what cannot be resolved is abandoned with nothing left of it.
import { describeTask, type Task } from "../judge/tasks.js";

/** What a resolve iteration is told: why it runs, and what it has to reconcile. */
export interface ResolveRequest {
  attempt: number;
  child: string;
  branch: string;
  task: Task;
  /** The tasks already merged into the integration branch. */
  merged: Task[];
  conflicts: string[];
  checkOutput: string | null;
}

/** The checks' verdict on the integrated tree; `output` names the failing check and its output's tail. */
export interface ChecksVerdict {
  passed: boolean;
  output: string;
}

/** The outside world of one merge (git in the integration worktree, the checks, the agent). */
export interface MergeIo {
  head(): Promise<{ ok: true; commit: string } | { ok: false; message: string }>;
  startMerge(branch: string): Promise<{ ok: true; conflicts: string[] } | { ok: false; message: string }>;
  unmerged(): Promise<{ ok: true; paths: string[] } | { ok: false; message: string }>;
  hasMarkers(path: string): boolean;
  /** Stages every change the agent made, except `paths` (files still holding conflict markers). */
  stageAllBut(paths: string[]): Promise<{ ok: true } | { ok: false; message: string }>;
  /** Writes the parent's own task file (this child's task marked done) and stages it. */
  writeTasks(text: string): Promise<{ ok: true } | { ok: false; message: string }>;
  commit(message: string): Promise<{ ok: true; commit: string } | { ok: false; message: string }>;
  resetTo(commit: string): Promise<{ ok: true } | { ok: false; message: string }>;
  runChecks(): Promise<ChecksVerdict>;
  /** Runs one resolve iteration of the agent on the integration worktree; resolves once it has ended. */
  resolve(request: ResolveRequest): Promise<void>;
  /** True once the parent was signalled: the merge is then abandoned for now and left queued. */
  interrupted(): boolean;
  /** False once the parent is ending (a limit, STOP): no agent may run, so a merge that needs one waits for `continue`. */
  mayResolve(): boolean;
}

/** One merge to make. */
export interface MergeItem {
  child: string;
  branch: string;
  task: Task;
  /** The task file as the parent wants it after this merge: its own copy with this task marked done. */
  tasksText: string;
  /** The path of the task file from the top of the worktree (never taken from the child's side). */
  tasksPath: string;
  merged: Task[];
  runId: string;
}

/** How a merge ended. */
export type MergeOutcome =
  | { kind: "merged"; commit: string; resolves: number }
  | { kind: "abandoned"; reason: string; resolves: number }
  | { kind: "interrupted"; resolves: number };

/** Merges `item` into the integration worktree, resolving at most `maxResolve` times. */
export async function mergeChild(item: MergeItem, io: MergeIo, maxResolve: number): Promise<MergeOutcome> {
  const head = await io.head();
  if (!head.ok) return { kind: "abandoned", reason: head.message, resolves: 0 };
  const start = head.commit;
  let resolves = 0;
  const abandon = async (reason: string): Promise<MergeOutcome> => {
    const reset = await io.resetTo(start);
    return { kind: "abandoned", reason: reset.ok ? reason : `${reason}; and ${reset.message}`, resolves };
  };
  const interrupted = async (): Promise<MergeOutcome> => {
    await io.resetTo(start);
    return { kind: "interrupted", resolves };
  };
  const started = await io.startMerge(item.branch);
  if (!started.ok) return abandon(started.message);
  for (;;) {
    // The task file is the parent's: whatever either side did to it, the parent's own copy goes in.
    const tasks = await io.writeTasks(item.tasksText);
    if (!tasks.ok) return abandon(tasks.message);
    const unmerged = await io.unmerged();
    if (!unmerged.ok) return abandon(unmerged.message);
    const conflicts = unmerged.paths.filter((path) => path !== item.tasksPath);
    let checkOutput: string | null = null;
    if (conflicts.length === 0) {
      if (io.interrupted()) return interrupted();
      const checks = await io.runChecks();
      if (checks.passed) {
        const committed = await io.commit(`ralph(${item.runId}): merge ${item.branch}: ${describeTask(item.task)}`);
        return committed.ok ? { kind: "merged", commit: committed.commit, resolves } : abandon(committed.message);
      }
      checkOutput = checks.output;
    }
    if (io.interrupted()) return interrupted();
    const why =
      conflicts.length > 0
        ? `conflicts in ${conflicts.join(", ")}`
        : `the checks failed on the merged tree: ${firstLine(checkOutput ?? "")}`;
    if (resolves >= maxResolve)
      return abandon(
        maxResolve === 0 ? `${why} (--max-resolve 0)` : `${why}, still after ${resolves} resolve iteration(s)`,
      );
    if (!io.mayResolve()) return interrupted();
    resolves += 1;
    await io.resolve({
      attempt: resolves,
      child: item.child,
      branch: item.branch,
      task: item.task,
      merged: item.merged,
      conflicts,
      checkOutput,
    });
    if (io.interrupted()) return interrupted();
    const now = await io.head();
    if (!now.ok || now.commit !== start) {
      // The agent committed (or moved the branch) itself: what ralph merges is only what it staged, so start over.
      const reset = await io.resetTo(start);
      if (!reset.ok) return abandon(reset.message);
      const again = await io.startMerge(item.branch);
      if (!again.ok) return abandon(again.message);
      continue;
    }
    // What the agent changed is staged (a conflicted file it left without markers is resolved); a file still holding markers is not.
    const unresolved = conflicts.filter((path) => io.hasMarkers(path));
    const staged = await io.stageAllBut(unresolved);
    if (!staged.ok) return abandon(staged.message);
  }
}

function firstLine(text: string): string {
  return (
    text
      .split("\n")
      .find((line) => line.trim() !== "")
      ?.trim() ?? "no output"
  );
}

/** The prompt of a resolve iteration. */
export function resolvePrompt(request: ResolveRequest, integrationBranch: string): string {
  const lines = [
    `You are resolving a merge on ${integrationBranch}, the integration branch of a parallel run.`,
    `Branch ${request.branch} (task ${describeTask(request.task)}) is being merged into it (resolve iteration ${request.attempt}).`,
    "",
  ];
  if (request.conflicts.length > 0) {
    lines.push("## Conflicted files", "", ...request.conflicts.map((path) => `- ${path}`), "");
    lines.push(
      "Edit each of them so that the work of both tasks is kept, and remove every conflict marker (<<<<<<<, =======, >>>>>>>).",
      "",
    );
  }
  lines.push("## The task being merged", "", describeTask(request.task), "");
  lines.push(
    "## Tasks already on the integration branch",
    "",
    ...(request.merged.length > 0 ? request.merged.map((task) => `- ${describeTask(task)}`) : ["(none)"]),
    "",
  );
  if (request.checkOutput !== null)
    lines.push(
      "## Check output",
      "",
      "The checks failed on the merged tree. Fix the code so that they pass.",
      "",
      "```",
      request.checkOutput.trimEnd(),
      "```",
      "",
    );
  lines.push("Do not commit, and leave the task list alone: ralph stages, checks and commits the merge itself.");
  return `${lines.join("\n")}\n`;
}
