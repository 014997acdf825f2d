// The engine: a pure step from one phase to the next. No I/O here; the driver performs the effects.
//
//        +------------------------- PAUSE --------------------------> [paused]
//        |   +---------------------- PAUSE removed -----------------------+
//        |   v
//  --> [boundary] <------------------- wait over -------------------- [waitingLimit]
//        |   ^                                                              ^
//        |   +------ go on (no verdict ended the run) ------+               |
//        | limits ok, a task left: spawn                    |               |
//        v                                                  |               |
//    [running] --------- agent exited: run checks -----> [judging]          |
//        |   |                                              |               |
//        |   +------------- usage limit (not counted): sleep --------------+
//        | signal, stop --now: end tree                     | signal: end checks
//        v                                                  v
//    [ending] ------ agent exited / checks over: record the iteration unjudged ------> [ended]
//
//   boundary, paused, waitingLimit -- signal, STOP, active: false, a limit, no task left --> [ended]
//   judging -- DONE, FAILED (consecutive failures), STALLED --> [ended]
//   running -- agent missing, or a usage limit with --on-limit stop --> [ended] (FAILED)
//
// A signal is one transition: from running or judging to ending (the agent's tree or the checks are ended,
// the iteration is recorded as interrupted, never judged), from anywhere else straight to ended.
import { failingContext } from "../judge/criteria.js";
import { isComplete, weighClaim, type ClaimInput } from "../judge/judge-completion.js";
import { describeChange } from "../judge/progress-fingerprint.js";
import { describeTask, firstIncomplete } from "../judge/tasks.js";
import { buildPrompt } from "../run/build-prompt.js";
import type { Ending } from "../run/finish-run.js";
import { iterationEntries, verdictEntries } from "../run/iteration-record.js";
import type { RecordEntry } from "../run/run-record.js";
import { agentReport, failureOf, fallbackWaitMs, withSpend } from "./iteration-facts.js";
import type { AgentRun, Attempt, FinishedRun, Input, Machine, Phase, Step } from "./phase.js";

/** The next machine and the effects to perform, for one input. */
export function step(machine: Machine, input: Input): Step {
  const { phase } = machine;
  switch (phase.id) {
    case "boundary":
      return atBoundary(machine, input);
    case "paused":
      return whilePaused(machine, input);
    case "running":
      return whileRunning(machine, phase, input);
    case "judging":
      return whileJudging(machine, phase, input);
    case "waitingLimit":
      return whileWaiting(machine, phase, input);
    case "ending":
      return whileEnding(machine, phase, input);
    case "ended":
      return stay(machine);
    default: {
      const unreachable: never = phase;
      throw new Error(`unknown phase ${JSON.stringify(unreachable)}`);
    }
  }
}

function stay(machine: Machine): Step {
  return { machine, effects: [] };
}

function logs(...lines: string[]): RecordEntry[] {
  return lines.map((line) => ({ kind: "log", line }));
}

function to(machine: Machine, phase: Phase, patch: Partial<Machine> = {}): Machine {
  return { ...machine, ...patch, phase };
}

function end(machine: Machine, ending: Ending, entries: RecordEntry[] = []): Step {
  return { machine: to(machine, { id: "ended", ending }), effects: entries.length > 0 ? [{ kind: "record", entries }] : [] };
}

function interrupted(signal: Input & { type: "signal" }): Ending {
  return { reason: "INTERRUPTED", detail: `received ${signal.signal}`, signal: signal.signal };
}

/** A new state.md read: the plan is replaced when it is good; a broken file is logged once. */
function applyDesired(machine: Machine, input: Input & { type: "desired" }): { machine: Machine; entries: RecordEntry[] } {
  const { read } = input;
  const tasks = input.tasks === undefined ? machine.tasks : input.tasks;
  if (!read.ok) {
    if (machine.planProblem === read.message) return { machine: { ...machine, tasks }, entries: [] };
    return { machine: { ...machine, planProblem: read.message, tasks }, entries: logs(`ignoring state.md until it is fixed: ${read.message}`) };
  }
  const entries: RecordEntry[] = [];
  if (machine.planProblem) entries.push(...logs("state.md is readable again"));
  if (read.plan.maxIterations !== machine.plan.maxIterations) entries.push(...logs(`max_iterations changed to ${read.plan.maxIterations} in state.md`));
  return { machine: { ...machine, plan: read.plan, planProblem: null, tasks }, entries };
}

/** A new plan applied; `active: false` ends the run (with `onStop` recorded too). */
function onDesired(machine: Machine, input: Input & { type: "desired" }, onStop: RecordEntry[] = []): Step {
  const next = applyDesired(machine, input);
  if (!next.machine.plan.active) return end(next.machine, INACTIVE, [...next.entries, ...onStop]);
  return { machine: next.machine, effects: next.entries.length > 0 ? [{ kind: "record", entries: next.entries }] : [] };
}

/** STOPPED for a STOP file; null to go on. */
function stopOf(input: Input & { type: "sentinel" }): Ending | null {
  return input.stop ? { reason: "STOPPED", detail: input.stopNow ? "stop --now requested" : "STOP file present" } : null;
}

const INACTIVE: Ending = { reason: "STOPPED", detail: "state.md says active: false" };

/** MAX_ITERATIONS, RUNTIME_EXCEEDED or BUDGET_EXCEEDED when a limit is reached before the next iteration. */
export function limitReached(machine: Machine, nowMs: number): Ending | null {
  const { iteration, costUsd, startedAtMs } = machine.tally;
  const max = machine.plan.maxIterations;
  if (max > 0 && iteration >= max) return { reason: "MAX_ITERATIONS", detail: `reached max_iterations ${max}` };
  const { maxRuntimeMs, maxCostUsd } = machine.config;
  const elapsed = nowMs - startedAtMs;
  if (maxRuntimeMs !== null && elapsed >= maxRuntimeMs) {
    return { reason: "RUNTIME_EXCEEDED", detail: `ran ${Math.round(elapsed / 1000)}s, limit ${Math.round(maxRuntimeMs / 1000)}s` };
  }
  if (maxCostUsd !== null && costUsd >= maxCostUsd) {
    return { reason: "BUDGET_EXCEEDED", detail: `spent $${costUsd.toFixed(4)} (CLI estimate), limit $${maxCostUsd}` };
  }
  return null;
}

function atBoundary(machine: Machine, input: Input): Step {
  switch (input.type) {
    case "signal":
      return end(machine, interrupted(input));
    case "desired":
      return onDesired(machine, input);
    case "sentinel": {
      const stop = stopOf(input);
      if (stop) return end(machine, stop);
      if (input.pause) {
        const tally = { ...machine.tally, lastAction: "paused by PAUSE file" };
        return { machine: to(machine, { id: "paused" }, { tally }), effects: [{ kind: "record", entries: [...logs("paused"), { kind: "event", body: { type: "paused" } }] }] };
      }
      return startIteration(machine, input.nowMs);
    }
    default:
      return stay(machine);
  }
}

/** Limits, then the task, then the agent. */
function startIteration(machine: Machine, nowMs: number): Step {
  const limit = limitReached(machine, nowMs);
  if (limit) return end(machine, limit);
  let task: string | null = null;
  if (machine.tasks) {
    const list = machine.tasks;
    if (!list.ok) return end(machine, { reason: "FAILED", detail: `task list ${list.file}: ${list.message}` });
    const next = firstIncomplete(list.tasks);
    if (!next) return end(machine, { reason: "NO_WORK", detail: `every task in ${machine.plan.tasks ?? "the task list"} is done` });
    task = describeTask(next);
  }
  const iteration = machine.tally.iteration + 1;
  const attempt: Attempt = { iteration, task, prompt: buildPrompt({ prompt: machine.plan.prompt, task, failingChecks: machine.tally.failingChecks }) };
  const tally = { ...machine.tally, iteration, task, lastAction: `iteration ${iteration} started` };
  return {
    machine: to(machine, { id: "running", attempt, resultSeen: false }, { tally }),
    effects: [
      { kind: "record", entries: [{ kind: "event", body: { type: "iteration_started", iteration, max_iterations: machine.plan.maxIterations, task } }] },
      { kind: "spawn", attempt },
    ],
  };
}

function whilePaused(machine: Machine, input: Input): Step {
  const resumedToStop = logs("resumed (to stop)");
  switch (input.type) {
    case "signal":
      return end(machine, interrupted(input), resumedToStop);
    case "desired":
      return onDesired(machine, input, resumedToStop);
    case "sentinel": {
      const stop = stopOf(input);
      if (stop) return end(machine, stop, resumedToStop);
      if (input.pause) return stay(machine);
      const tally = { ...machine.tally, lastAction: "resumed" };
      return {
        machine: to(machine, { id: "boundary" }, { tally }),
        effects: [{ kind: "record", entries: [...logs("resumed"), { kind: "event", body: { type: "resumed" } }] }, { kind: "look", what: "all" }],
      };
    }
    case "control":
      return { machine, effects: [{ kind: "look", what: "control" }] };
    default:
      return stay(machine);
  }
}

function whileRunning(machine: Machine, phase: Phase & { id: "running" }, input: Input): Step {
  switch (input.type) {
    case "signal":
      return { machine: to(machine, { id: "ending", ending: interrupted(input), attempt: phase.attempt, judged: null }), effects: [{ kind: "endTree", why: "interrupted" }] };
    case "sentinel":
      if (!input.stopNow) return stay(machine);
      return {
        machine: to(machine, { id: "ending", ending: { reason: "STOPPED", detail: "stop --now ended the agent" }, attempt: phase.attempt, judged: null }),
        effects: [{ kind: "endTree", why: "stop_now" }],
      };
    case "control":
      return { machine, effects: [{ kind: "look", what: "sentinels" }] };
    case "agentResult":
      return stay(to(machine, { ...phase, resultSeen: true }));
    case "agentExited":
      return agentExited(machine, phase.attempt, input.run);
    case "limitHit":
      return input.run.endedBy === null ? limitHit(machine, phase.attempt, input) : agentExited(machine, phase.attempt, input.run);
    default:
      return stay(machine);
  }
}

function claimInput(machine: Machine, attempt: Attempt, run: FinishedRun, failure: string | null): ClaimInput {
  return {
    promiseText: machine.plan.completionPromise,
    finalMessage: run.outcome.finalMessage,
    prompt: attempt.prompt,
    criteria: machine.plan.completionCriteria,
    // A failed iteration is judged by nothing; a dry run starts nothing, the user's check commands included.
    mayCheck: !failure && !machine.config.dryRun,
  };
}

function agentExited(machine: Machine, attempt: Attempt, run: AgentRun): Step {
  if (run.kind === "missing") {
    const entries: RecordEntry[] = [{ kind: "progress", block: [["iteration", attempt.iteration], ["result", "agent_missing"], ["error", run.message]] }];
    return end(machine, { reason: "FAILED", detail: `agent could not be started: ${run.message}` }, entries);
  }
  const failure = failureOf(run);
  const { claim, toCheck } = weighClaim(claimInput(machine, attempt, run, failure));
  const tally = { ...machine.tally, limitsInARow: 0 };
  return {
    machine: to(machine, { id: "judging", attempt, run, claim, failure }, { tally }),
    effects: [{ kind: "runChecks", iteration: attempt.iteration, criteria: toCheck, fingerprint: machine.config.stallLimit > 0 && !failure }],
  };
}

/** A usage limit: the call and its spend are recorded, the iteration is not counted; wait, or stop. */
function limitHit(machine: Machine, attempt: Attempt, input: Input & { type: "limitHit" }): Step {
  const { limit, run } = input;
  const spent = withSpend(machine.tally, run.outcome);
  const tally = { ...spent, iteration: attempt.iteration - 1, limitsInARow: spent.limitsInARow + 1, lastAction: `usage limit: ${limit.message}` };
  const entries = iterationEntries(agentReport(attempt, run, tally, "usage_limit", { claim: null, verdicts: [], error: limit.message, limit }));
  if (machine.config.onLimit === "stop") {
    const resets = limit.resetAt ? `, resets ${limit.resetAt.toISOString()}` : "";
    return end(to(machine, machine.phase, { tally }), { reason: "FAILED", detail: `provider usage limit reached (${limit.message})${resets}; --on-limit stop` }, entries);
  }
  const resumeAtMs = limit.resetAt && limit.resetAt.getTime() > input.nowMs ? limit.resetAt.getTime() : input.nowMs + fallbackWaitMs(tally.limitsInARow);
  const resumeAt = new Date(resumeAtMs).toISOString();
  entries.push(
    { kind: "event", body: { type: "waiting_limit", iteration: attempt.iteration, message: limit.message, reset_at: limit.resetAt?.toISOString() ?? null, resume_at: resumeAt } },
    ...logs(`usage limit reached (${limit.message}); waiting until ${resumeAt}, then retrying iteration ${attempt.iteration}`),
  );
  return {
    machine: to(machine, { id: "waitingLimit", iteration: attempt.iteration, resumeAtMs }, { tally }),
    effects: [{ kind: "record", entries }, { kind: "sleep", untilMs: resumeAtMs }],
  };
}

function whileJudging(machine: Machine, phase: Phase & { id: "judging" }, input: Input): Step {
  switch (input.type) {
    case "signal":
      return { machine: to(machine, { id: "ending", ending: interrupted(input), attempt: phase.attempt, judged: phase.run }), effects: [{ kind: "endTree", why: "interrupted" }] };
    case "checked":
      return settle(machine, phase, input);
    default:
      return stay(machine);
  }
}

/** Records the judged iteration and decides: DONE, FAILED, STALLED, or another round. */
function settle(machine: Machine, phase: Phase & { id: "judging" }, input: Input & { type: "checked" }): Step {
  const { attempt, run, claim, failure } = phase;
  const { verdicts } = input;
  const done = isComplete(claimInput(machine, attempt, run, failure), claim, verdicts);
  const criteriaPass = verdicts.every((verdict) => verdict.passed);
  const failures = failure ? machine.tally.failures + 1 : 0;
  let tally = { ...withSpend(machine.tally, run.outcome), failures, lastAction: `iteration ${attempt.iteration} ${failure ? `failed: ${failure}` : "finished"}` };
  const result = failure ? (run.endedBy === "timeout" ? "timeout" : "failed") : done ? "done" : "continue";
  const entries = [...verdictEntries(attempt.iteration, verdicts), ...iterationEntries(agentReport(attempt, run, tally, result, { claim, verdicts, error: failure }))];
  const settled = to(machine, machine.phase, { tally });
  if (failure) {
    entries.push(...logs(`iteration ${attempt.iteration} failed (${failure}); ${failures}/${machine.config.maxFailures} consecutive failures`));
    if (failures >= machine.config.maxFailures) return end(settled, { reason: "FAILED", detail: `${failures} consecutive failed iterations, last: ${failure}` }, entries);
    return goOn(settled, entries);
  }
  if (done) {
    entries.push(...logs("LOOP_COMPLETE: all criteria met."));
    const { completionPromise: promise, completionCriteria: criteria } = machine.plan;
    return end(settled, { reason: "DONE", detail: promise ? `promise <promise>${promise}</promise> found${criteria.length ? " and criteria passed" : ""}` : "all criteria passed" }, entries);
  }
  const failingChecks = claim?.found && !criteriaPass ? failingContext(verdicts) : "";
  if (failingChecks) entries.push(...logs("promise claimed but a completion check failed; its output goes into the next prompt"));
  tally = { ...tally, failingChecks };
  const limit = machine.config.stallLimit;
  const now = input.fingerprint;
  if (limit === 0 || now === null) return goOn(to(settled, settled.phase, { tally }), entries);
  if (!now.ok) {
    entries.push(...logs(`stall detection needs git: ${now.message}`));
    return goOn(to(settled, settled.phase, { tally }), entries);
  }
  const before = tally.fingerprint;
  const change = before ? describeChange(before, now) : "first fingerprint";
  const stalled = change === null ? tally.stalled + 1 : 0;
  tally = { ...tally, fingerprint: now, stalled };
  entries.push(
    ...logs(
      change === null
        ? `no progress in iteration ${attempt.iteration} (${stalled}/${limit}): git HEAD ${now.head.slice(0, 12)}, working tree and task list unchanged`
        : `progress in iteration ${attempt.iteration}: ${change}`,
    ),
  );
  const next = to(settled, settled.phase, { tally });
  if (stalled >= limit) return end(next, { reason: "STALLED", detail: `${stalled} consecutive iterations without a change to the git tree, HEAD or task list` }, entries);
  return goOn(next, entries);
}

function goOn(machine: Machine, entries: RecordEntry[]): Step {
  return { machine: to(machine, { id: "boundary" }), effects: [{ kind: "record", entries }, { kind: "look", what: "all" }] };
}

function whileWaiting(machine: Machine, phase: Phase & { id: "waitingLimit" }, input: Input): Step {
  switch (input.type) {
    case "signal":
      return end(machine, interrupted(input));
    case "desired":
      return onDesired(machine, input);
    case "sentinel": {
      const stop = stopOf(input);
      if (stop) return end(machine, stop);
      const limit = limitReached(machine, input.nowMs);
      if (limit) return end(machine, limit);
      if (input.nowMs < phase.resumeAtMs) return stay(machine);
      const tally = { ...machine.tally, lastAction: "usage limit wait over" };
      return {
        machine: to(machine, { id: "boundary" }, { tally }),
        effects: [{ kind: "record", entries: logs(`usage limit wait over; retrying iteration ${phase.iteration}`) }, { kind: "look", what: "all" }],
      };
    }
    case "control":
    case "tick":
      return { machine, effects: [{ kind: "look", what: "control" }] };
    default:
      return stay(machine);
  }
}

/** Ending with an agent or checks still in flight: wait for them, record the iteration unjudged, end. */
function whileEnding(machine: Machine, phase: Phase & { id: "ending" }, input: Input): Step {
  switch (input.type) {
    case "signal":
      // A signal outranks a stop --now already under way: the runner must die of it.
      if (phase.ending.reason === "INTERRUPTED") return stay(machine);
      return stay(to(machine, { ...phase, ending: interrupted(input) }));
    case "agentExited":
    case "limitHit":
      if (phase.judged) return stay(machine);
      return unjudged(machine, phase, input.run);
    case "checked":
      return phase.judged ? unjudged(machine, phase, phase.judged) : stay(machine);
    default:
      return stay(machine);
  }
}

function unjudged(machine: Machine, phase: Phase & { id: "ending" }, run: AgentRun): Step {
  const { attempt, ending } = phase;
  if (run.kind === "missing") {
    return end(machine, ending, [{ kind: "progress", block: [["iteration", attempt.iteration], ["result", "agent_missing"], ["error", run.message]] }]);
  }
  const tally = { ...withSpend(machine.tally, run.outcome), lastAction: `iteration ${attempt.iteration} ended: ${ending.detail}` };
  const result = ending.reason === "INTERRUPTED" ? "interrupted" : "stopped";
  const entries = iterationEntries(agentReport(attempt, run, tally, result, { claim: null, verdicts: [], error: failureOf(run) }));
  return end(to(machine, phase, { tally }), ending, entries);
}
