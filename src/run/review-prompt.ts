// What a reviewer is given: its rules (read-only, how to answer), the task, the run's diff so far, and the
// person's own instructions. It reaches the reviewer on stdin or as one argv word, never through a shell.
import { fenceFor } from "../util/fence-for.js";

/** The parts of one review's prompt. */
export interface ReviewPromptParts {
  /** The run's prompt as the worker got it this iteration (with its current task). */
  task: string;
  /** The run's diff so far (git diff of the work tree when the run started → after the iteration), or why there is none. */
  diff: { text: string; truncated: boolean } | { missing: string };
  /** The person's extra instructions (`prompt:` of the criterion). */
  instructions: string | null;
  iteration: number;
  /** Whether the reviewer runs in a sandbox with the tree mounted read-only. */
  sandboxed: boolean;
  /** The work tree, when the reviewer starts elsewhere (so that it takes no settings from the tree). */
  treeDir?: string;
}

/** The reviewer's prompt. */
export function reviewPrompt(parts: ReviewPromptParts): string {
  const walls = parts.sandboxed
    ? "The work tree is mounted read-only for you: you cannot change it."
    : "You have a read-only view of the work tree: do not create, change or delete any file, and do not commit. A review that changes the tree does not count.";
  // The diff is the agent's text: its fence is longer than any run of backticks in it, so no line of it closes the fence.
  const ticks = "missing" in parts.diff ? "" : fenceFor(parts.diff.text, "`");
  const diff =
    "missing" in parts.diff
      ? `(no diff: ${parts.diff.missing})`
      : `${ticks}diff\n${parts.diff.text}${parts.diff.truncated ? "\n… (the diff is cut here; read the files for the rest)" : ""}\n${ticks}`;
  const fence = fenceFor(parts.task, "~");
  return [
    `You are reviewing the work of another coding agent, done in iteration ${parts.iteration} of an automated loop, before it is accepted as finished.`,
    walls,
    `Judge whether the task is really done and done well: read the diff and, where you need to, the files and tests ${parts.treeDir === undefined ? "in the current directory" : `in the work tree at ${parts.treeDir} (not your current directory)`}.`,
    "",
    "## The task the agent was given",
    "",
    fence,
    parts.task.replace(/\n+$/, ""),
    fence,
    "",
    "## The diff of the run so far",
    "",
    "Every change since the run started, not only this iteration's: none of it is approved yet.",
    "",
    diff,
    ...(parts.instructions?.trim() ? ["", "## Review instructions", "", parts.instructions.trim()] : []),
    "",
    "## How to answer",
    "",
    "Write your findings first: what is wrong or missing, each with the file and what to change, so the agent can act on them.",
    "Then end your answer with a last line that holds only the verdict tag: the approve tag when the task is done and correct, the changes tag when anything must change.",
    "The tags are <verdict>approve</verdict> and <verdict>changes</verdict>. Nothing may follow the tag; a tag anywhere else does not count.",
    "",
  ].join("\n");
}
