// `ralph hook handle`: at every stop of a Claude Code session, let it stop or feed the loop's prompt back.
//
//   no loop file / inactive / other session → allow          corrupt → end FAILED, allow
//   bind an unbound loop to this session → evaluate the ended iteration (promise, criteria)
//     done → end DONE · max reached → end MAX_ITERATIONS · Claude Code's block cap reached → pause (allow)
//     the last message ends with <ask>QUESTION</ask> → iteration + 1, allow with the question shown: the
//       person's reply in the session is the answer, and the loop goes on at the next stop
//     otherwise → iteration + 1, block with the prompt
// Every ending goes through endHookLoop (active: false, then finishRun and its completion marker).
import { existsSync } from "node:fs";
import { basename } from "node:path";
import { readSentinels } from "../control/control-files.js";
import { limitEnding, stopEnding } from "../control/limit-rules.js";
import { buildPrompt } from "../run/build-prompt.js";
import { iterationEntries, verdictEntries } from "../run/iteration-record.js";
import type { Ending } from "../run/finish-run.js";
import type { RunRecord } from "../run/run-record.js";
import { blockCap, blocksThisTurn, recordBlocks } from "./block-cap.js";
import { evaluateStop } from "./evaluate-stop.js";
import { hookFiles, type HookFiles } from "./hook-files.js";
import type { StopHookInput } from "./hook-input.js";
import { askMessage, blockMessage, endMessage, pauseMessage } from "./hook-messages.js";
import { findAsk } from "../judge/ask.js";
import { createHookRun, endHookLoop, hasEnded, newRunId, openHookRun, type HookClock } from "./hook-run.js";
import { patchHookLoop, readHookLoop, type HookLoop } from "./hook-loop-file.js";
import { readLastAssistantMessage, waitForTranscript, type TranscriptRetry } from "./last-message.js";
import { withLoopLock } from "./loop-lock.js";
import { guardLoopFile } from "./loop-guard.js";
import { trustedLoopCopy } from "./loop-trust.js";
import { readTranscriptUsage } from "./transcript-usage.js";
import { readBudgets } from "../spend/budget-config.js";
import { SpendBook } from "../spend/spend-book.js";

/** What the hook tells Claude Code. */
export type StopDecision =
  { kind: "allow"; message: string | null } | { kind: "block"; reason: string; systemMessage: string };

/** What handleStop needs from the outside world. */
export interface HandleDeps extends HookClock {
  projectDir: string;
  /** The hook's environment (Claude Code's): the block cap and the environment of command checks. */
  env: NodeJS.ProcessEnv;
  transcriptRetry?: TranscriptRetry;
  lockWaitMs?: number;
}

const allow = (message: string | null = null): StopDecision => ({ kind: "allow", message });

/** Decides one stop. Expected problems are decisions; an exception means a bug (the CLI records it as FAILED). */
export async function handleStop(input: StopHookInput, deps: HandleDeps): Promise<StopDecision> {
  const files = hookFiles(deps.projectDir);
  if (!existsSync(files.loop)) return allow();
  // Another session's loop is none of this session's business: no lock, no waiting, no message. Whose loop
  // it is, ralph's copy says (the session may have edited session_id in the file; the guard refuses that).
  const copy = trustedLoopCopy(files.loop);
  const peek = readHookLoop(existsSync(copy) ? copy : files.loop);
  if (peek.kind === "ok" && peek.loop.active && peek.loop.sessionId !== "" && peek.loop.sessionId !== input.sessionId)
    return allow();
  const locked = await withLoopLock(files.lock, deps, deps.lockWaitMs ?? 10_000, async () => {
    // An edit made to the loop file during the session only tightens it; a loosening is refused, in one line.
    const refused = guardLoopFile(files.loop);
    return withNote(await decide(input, deps, files), refused);
  });
  if (locked.ok) return locked.value;
  return allow(
    `ralph: another process (pid ${locked.holder?.pid ?? "?"}) holds ${files.lock}; this stop was let through`,
  );
}

/** The decision with `note` (a line for the person) shown too. */
function withNote(decision: StopDecision, note: string | null): StopDecision {
  if (note === null) return decision;
  if (decision.kind === "block") return { ...decision, systemMessage: `${note}\n${decision.systemMessage}` };
  return { kind: "allow", message: decision.message === null ? note : `${note}\n${decision.message}` };
}

async function decide(input: StopHookInput, deps: HandleDeps, files: HookFiles): Promise<StopDecision> {
  const read = readHookLoop(files.loop);
  if (read.kind === "missing") return allow();
  if (read.kind === "corrupt") {
    const record = read.runId ? openHookRun(deps.projectDir, read.runId, deps) : null;
    if (record && hasEnded(record)) return allow(); // reported and recorded at an earlier stop
    const ended = endHookLoop(
      files.loop,
      record,
      { reason: "FAILED", detail: `corrupt state file: ${read.message}` },
      deps,
    );
    const recorded = ended ? `the loop ended (FAILED, run ${ended.runId})` : "no run could be recorded";
    return allow(`ralph: ${read.message}; ${recorded}. Fix or delete the file to start a new loop.`);
  }
  const loop = read.loop;
  // A loop has one owner session: the first stop that names one binds it. A stop without a session id
  // (empty or missing) never binds it and is never blocked by it, so no session can take a loop over.
  const ours = input.sessionId !== null && (loop.sessionId === "" || loop.sessionId === input.sessionId);
  if (!loop.active) {
    const record = loop.runId ? openHookRun(deps.projectDir, loop.runId, deps) : null;
    if (!record || hasEnded(record)) return allow(); // nothing left to record: leave the file alone
    const ended = endHookLoop(
      files.loop,
      record,
      { reason: "STOPPED", detail: "active: false in the state file" },
      deps,
    );
    return allow(ended && ours ? endMessage("STOPPED", ended.runId, ended.iterations, "active: false") : null);
  }
  if (!ours) return allow();
  if (loop.sessionId === "" && input.sessionId !== null) {
    patchHookLoop(files.loop, { session_id: input.sessionId });
    loop.sessionId = input.sessionId;
  }
  const { record, created } = openOrCreateRun(loop, deps, files);
  if (hasEnded(record)) {
    patchHookLoop(files.loop, { active: false });
    return allow(`ralph: run ${record.status.run_id} has already ended; the in-session loop is now inactive`);
  }
  const stopped = stopEnding(readSentinels(record.paths), {
    stop: "STOP file (ralph stop)",
    now: "STOP file (ralph stop --now)",
  });
  if (stopped) return end(files, record, deps, stopped);
  // Only `ralph run` starts a reviewer: here a review criterion could never pass, and every block would be wasted.
  if (loop.completionCriteria.some((criterion) => criterion.type === "review")) {
    return end(files, record, deps, {
      reason: "FAILED",
      detail: `a type: review criterion is in ${basename(files.loop)}, but only ralph run starts a reviewer; remove it there, or use ralph run`,
    });
  }
  // Only a message written after the previous decision (the last status write) belongs to this iteration.
  const since = created ? null : new Date(record.status.updated_at);
  return evaluateAndContinue(input, deps, files, loop, record, since);
}

function openOrCreateRun(loop: HookLoop, deps: HandleDeps, files: HookFiles): { record: RunRecord; created: boolean } {
  const existing = loop.runId ? openHookRun(deps.projectDir, loop.runId, deps) : null;
  if (existing) return { record: existing, created: false };
  // A hand-written loop file (no run_id), or a run directory that was deleted: record from here on.
  const runId = loop.runId ?? newRunId(deps.projectDir, deps.now());
  if (loop.runId === null) patchHookLoop(files.loop, { run_id: runId });
  loop.runId = runId;
  return { record: createHookRun(deps.projectDir, runId, loop, deps), created: true };
}

async function evaluateAndContinue(
  input: StopHookInput,
  deps: HandleDeps,
  files: HookFiles,
  loop: HookLoop,
  record: RunRecord,
  since: Date | null,
): Promise<StopDecision> {
  const iteration = loop.iteration;
  const sessionId = loop.sessionId === "" ? null : loop.sessionId;
  let source = "hook_input";
  let lastMessage = input.lastAssistantMessage;
  // The transcript may lag behind the stop: it is waited for (bounded) for the message when the input
  // lacks one, and for this turn's API call when it has one, so that the call counts in the tokens.
  if (lastMessage === null) {
    lastMessage = input.transcriptPath
      ? await readLastAssistantMessage(input.transcriptPath, since, deps.transcriptRetry)
      : null;
    source = lastMessage === null ? "none" : "transcript";
  } else if (input.transcriptPath && existsSync(input.transcriptPath))
    await waitForTranscript(input.transcriptPath, since, deps.transcriptRetry);
  const verdict = await evaluateStop(loop, lastMessage, { projectDir: deps.projectDir, env: deps.env });
  closeQuestion(record, iteration);
  const cap = blockCap(deps.env);
  const blocks = blocksThisTurn(record.paths.dir, input.stopHookActive);
  const maxReached = limitEnding(
    { maxIterations: loop.maxIterations, maxRuntimeMs: null, maxCostUsd: null },
    { iterations: iteration, elapsedMs: 0, costUsd: 0 },
  );
  const asked = !verdict.done && !maxReached ? findAsk(lastMessage ?? "", loop.prompt) : null;
  const question = asked?.found ? asked.question : null;
  const pause = !verdict.done && !maxReached && question === null && cap !== null && blocks >= cap;
  const result = verdict.done
    ? "done"
    : maxReached
      ? "max_iterations"
      : question !== null
        ? "asked"
        : pause
          ? "paused"
          : "continue";
  const book = hookSpend(deps, record);
  const usage = loopUsage(input, record, book, iteration, deps.now());
  record.apply(verdictEntries(iteration, verdict.verdicts));
  const entries = iterationEntries({
    iteration,
    result,
    sessionId,
    claim: verdict.claim,
    verdicts: verdict.verdicts,
    hook: {
      messageSource: source,
      stopHookActive: input.stopHookActive,
      blocksThisTurn: blocks,
      ...(usage
        ? {
            usage: {
              tokens: usage.iterationTokens,
              costUsd: usage.iterationCost,
              costTotalUsd: usage.spend.cost_usd,
              costSource: usage.costSource,
            },
          }
        : {}),
    },
  });
  record.apply(entries);
  record.update({
    calls: usage?.spend.calls ?? iteration,
    session_id: sessionId,
    last_action: `iteration ${iteration} ended (${result})`,
    ...(usage ? { tokens: usage.spend.tokens, cost_usd: usage.spend.cost_usd } : {}),
  });
  if (verdict.done) {
    record.log("LOOP_COMPLETE: all criteria met.");
    const found = loop.completionPromise !== null ? `<promise>${loop.completionPromise}</promise> found` : "";
    const checks = verdict.verdicts.length > 0 ? "all checks passed" : "";
    return end(files, record, deps, { reason: "DONE", detail: [found, checks].filter(Boolean).join(", ") });
  }
  if (maxReached) return end(files, record, deps, maxReached);
  // The next iteration starts only while the budgets hold (a session cannot wait for a new day: it ends here).
  const budget = book.check(deps.now().getTime());
  if (budget) return end(files, record, deps, { reason: "BUDGET_EXCEEDED", detail: budget.detail });

  // Checks may have taken minutes: a cancel or a tightening made meanwhile wins over this decision.
  const late = guardLoopFile(files.loop);
  if (late !== null) record.log(late);
  const fresh = readHookLoop(files.loop);
  if (fresh.kind !== "ok")
    return end(files, record, deps, {
      reason: "FAILED",
      detail:
        fresh.kind === "corrupt" ? `corrupt state file: ${fresh.message}` : "state file removed during the iteration",
    });
  if (!fresh.loop.active)
    return end(files, record, deps, { reason: "STOPPED", detail: "active: false in the state file" });
  const next = iteration + 1;
  patchHookLoop(files.loop, { iteration: next });
  const waits =
    question !== null
      ? `waiting for your answer before iteration ${next}`
      : pause
        ? `paused before iteration ${next}: Claude Code's block cap`
        : null;
  record.update({
    iteration: next,
    max_iterations: fresh.loop.maxIterations,
    state: "running",
    last_action: waits ?? `iteration ${next} started`,
    question,
  });
  record.event({ type: "iteration_started", iteration: next, task: null });
  if (question !== null) {
    recordBlocks(record.paths.dir, 0);
    record.event({ type: "needs_human", iteration, question });
    record.log(
      `the agent asks: ${JSON.stringify(question)}; the session stops for the answer, and the loop goes on at iteration ${next} with your reply`,
    );
    return allow(askMessage(question, next, fresh.loop.maxIterations, record.status.run_id));
  }
  if (pause && cap !== null) {
    recordBlocks(record.paths.dir, 0);
    record.log(
      `paused before iteration ${next}: Claude Code ends a turn after ${cap} consecutive Stop-hook blocks; the next user message resumes the loop`,
    );
    return allow(pauseMessage(next, fresh.loop.maxIterations, record.status.run_id, cap));
  }
  recordBlocks(record.paths.dir, blocks + 1);
  const systemMessage = blockMessage({
    next,
    max: fresh.loop.maxIterations,
    runId: record.status.run_id,
    promise: fresh.loop.completionPromise,
    checksFailed: verdict.failingChecks !== "",
    cap,
    blocksAfter: blocks + 1,
  });
  const reason = buildPrompt({
    prompt: Buffer.from(fresh.loop.prompt),
    task: null,
    failingChecks: verdict.failingChecks,
  })
    .toString("utf8")
    .replace(/\n+$/, "");
  return { kind: "block", reason, systemMessage };
}

/** The question of the previous stop was answered in the session (the person's reply started this iteration). */
function closeQuestion(record: RunRecord, iteration: number): void {
  const question = record.status.question;
  if (typeof question !== "string" || question === "") return;
  record.update({ question: null });
  record.event({ type: "answered", iteration: iteration - 1, question, answer: null });
}

/** The loop's record in the spend ledger, with the project's and the user's budgets. */
function hookSpend(deps: HandleDeps, record: RunRecord): SpendBook {
  const book = new SpendBook(deps.env);
  const budgets = readBudgets(deps.projectDir, deps.env);
  const runId = record.status.run_id;
  // The loop began at `ralph hook start` (its first status): the ledger keeps that start from the first stop on.
  const startedAt = new Date(record.status.started_at);
  book.open({
    projectDir: deps.projectDir,
    runId,
    parent: null,
    agent: "claude",
    model: null,
    maxCostUsd: null,
    maxTokens: null,
    budgets: budgets.ok ? { project: budgets.project, user: budgets.user } : { project: null, user: null },
    now: deps.now(),
    ...(Number.isFinite(startedAt.getTime()) ? { startedAt } : {}),
  });
  return book;
}

/**
 * The loop's spend from the session transcript: what it used since the loop started, less what the spend
 * ledger already holds for it, is this iteration's call, recorded there (never taken from status.json, which
 * the session can write). Returns the run's totals after it and the iteration's share.
 */
function loopUsage(input: StopHookInput, record: RunRecord, book: SpendBook, iteration: number, now: Date) {
  const run = book.run;
  if (!input.transcriptPath || !run) return null;
  const usage = readTranscriptUsage(input.transcriptPath, new Date(run.started_at));
  if (!usage) return null;
  const runId = record.status.run_id;
  const before = book.totalsOf(runId, now.getTime());
  const tokens = {
    input: Math.max(0, usage.tokens.input - before.tokens.input),
    output: Math.max(0, usage.tokens.output - before.tokens.output),
    cacheRead: Math.max(0, usage.tokens.cacheRead - before.tokens.cache_read),
    cacheWrite: Math.max(0, usage.tokens.cacheWrite - before.tokens.cache_write),
  };
  const stated = usage.costUsd === null ? undefined : Math.max(0, usage.costUsd - (before.cost_usd ?? 0));
  const call = book.record({
    role: "hook",
    iteration,
    agent: "claude",
    model: usage.model,
    costUsd: stated,
    tokens,
    durationMs: null,
    at: now,
  });
  const after = book.totalsOf(runId, now.getTime());
  const t = after.tokens;
  return {
    spend: {
      tokens: { input: t.input, output: t.output, cacheRead: t.cache_read, cacheWrite: t.cache_write },
      cost_usd: after.cost_usd ?? 0,
      calls: after.calls,
    },
    iterationTokens: tokens,
    iterationCost: call?.cost_usd ?? null,
    costSource: call?.cost_source ?? "unknown",
  };
}

function end(files: HookFiles, record: RunRecord, deps: HandleDeps, ending: Ending): StopDecision {
  const ended = endHookLoop(files.loop, record, ending, deps);
  return allow(ended ? endMessage(ending.reason, ended.runId, ended.iterations, ending.detail) : null);
}

/** After an unexpected error: end the loop as FAILED (when it can be found) so it never loops on a bug. */
export function recordHookFailure(projectDir: string, message: string, clock: HookClock): string | null {
  const files = hookFiles(projectDir);
  const read = readHookLoop(files.loop);
  const runId = read.kind === "ok" ? read.loop.runId : read.kind === "corrupt" ? read.runId : null;
  if (read.kind === "missing") return null;
  const record = runId ? openHookRun(projectDir, runId, clock) : null;
  const ended = endHookLoop(
    files.loop,
    record,
    { reason: "FAILED", detail: `internal error in the Stop hook: ${message}` },
    clock,
  );
  return ended ? ended.runId : null;
}
