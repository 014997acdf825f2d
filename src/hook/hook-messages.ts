// What the hook shows the user (systemMessage) at each decision; the model sees only the block's reason.
import type { ExitReason } from "../exit/exit-reasons.js";
import type { HookLoop } from "./hook-loop-file.js";

const CANCEL_HINT = "ralph hook cancel (or /cancel-ralph) to stop";
// Claude Code shows every Stop-hook block under an error label; this is what the user sees next to it.
const BLOCK_LABEL_NOTE = 'Claude Code labels this "Stop hook error": it is the loop going on, not a failure';

function ofMax(iteration: number, max: number): string {
  return max > 0 ? `${iteration}/${max}` : `${iteration} (no limit)`;
}

/** The systemMessage of a block: which iteration starts now, and how the loop ends. */
export function blockMessage(details: {
  next: number;
  max: number;
  runId: string;
  promise: string | null;
  checksFailed: boolean;
  cap: number | null;
  blocksAfter: number;
}): string {
  const parts = [`ralph iteration ${ofMax(details.next, details.max)}`, `run ${details.runId}`];
  if (details.checksFailed) parts.push("completion checks failed: their output is in the prompt");
  if (details.promise !== null)
    parts.push(
      `done when <promise>${details.promise}</promise> is true${details.checksFailed ? " and the checks pass" : ""}`,
    );
  if (details.cap !== null && details.blocksAfter >= details.cap && (details.max === 0 || details.next < details.max)) {
    parts.push(
      `Claude Code ends a turn after ${details.cap} consecutive Stop-hook blocks: the loop pauses after this iteration until you send a message`,
    );
  }
  parts.push(CANCEL_HINT);
  parts.push(BLOCK_LABEL_NOTE);
  return parts.join(" · ");
}

/** The systemMessage when Claude Code's block cap would override the next block: the loop waits for the user. */
export function pauseMessage(next: number, max: number, runId: string, cap: number): string {
  return [
    `ralph: paused before iteration ${ofMax(next, max)} (run ${runId})`,
    `Claude Code ends a turn after ${cap} consecutive Stop-hook blocks`,
    'send any message (e.g. "continue") to go on',
    "set CLAUDE_CODE_STOP_HOOK_BLOCK_CAP to change the cap",
    CANCEL_HINT,
  ].join(" · ");
}

/** The systemMessage when the agent asked the person a question: the session stops, the reply is the answer. */
export function askMessage(question: string, next: number, max: number, runId: string): string {
  return [
    `ralph: the agent asks: ${question}`,
    `reply in this session to answer: the loop goes on with iteration ${ofMax(next, max)} (run ${runId})`,
    CANCEL_HINT,
  ].join(" · ");
}

/** The systemMessage when the loop has just ended. */
export function endMessage(reason: ExitReason, runId: string, iteration: number, detail: string): string {
  const iterations = `${iteration} iteration${iteration === 1 ? "" : "s"}`;
  switch (reason) {
    case "DONE":
      return `ralph: loop done after ${iterations} (${detail}) · run ${runId}`;
    case "MAX_ITERATIONS":
      return `ralph: loop stopped after ${iterations}: max_iterations reached without completion · run ${runId} · start a new loop to go on`;
    case "STOPPED":
      return `ralph: loop stopped at iteration ${iteration} (${detail}) · run ${runId}`;
    default:
      return `ralph: loop ended with ${reason} at iteration ${iteration} (${detail}) · run ${runId}`;
  }
}

/** What `ralph hook start` prints; inside /ralph-loop the model reads it as the start of its task. */
export function startSummary(details: {
  runId: string;
  state: HookLoop;
  hookLine: string;
  cap: number | null;
  hookNewInSession: boolean;
}): string[] {
  const { state, cap } = details;
  const lines = [
    `ralph: in-session loop started · run ${details.runId} · max ${state.maxIterations || "unlimited"} iterations`,
    details.hookLine,
  ];
  if (details.hookNewInSession) {
    // Measured with 2.1.197 (-p): hooks are read when a session starts; one added later does not run in it.
    lines.push(
      "WARNING: the Stop hook was only now installed, and Claude Code reads hooks when a session starts: restart this session (claude --continue) for the loop to run.",
    );
  }
  const checks = state.completionCriteria.map((criterion) => `\`${criterion.check}\``).join(", ");
  if (state.completionPromise !== null) {
    lines.push(
      `Done when your final message holds <promise>${state.completionPromise}</promise> and it is completely true${checks ? `, and these checks pass: ${checks}` : ""}.`,
    );
  } else if (checks) lines.push(`Done when these checks pass: ${checks}.`);
  else lines.push("No completion promise or check: the loop runs until max_iterations.");
  if (cap !== null && (state.maxIterations === 0 || state.maxIterations > cap + 1)) {
    lines.push(
      `Claude Code ends a turn after ${cap} consecutive Stop-hook blocks: every ${cap + 1} iterations the loop pauses until you send a message.`,
    );
  }
  lines.push(`Cancel with: ${CANCEL_HINT.replace(" to stop", "")}`, "", state.prompt.trimEnd());
  return lines;
}
