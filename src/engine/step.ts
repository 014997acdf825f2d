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
//        | signal, failed write, stop --now: end tree       | signal, failed write, stop --now: end checks
//        v                                                  v
//    [ending] ------ agent exited / checks over: record the iteration unjudged ------> [ended]
//
//   boundary, paused, waitingLimit -- signal, failed write, STOP, active: false, a limit, no task left --> [ended]
//   boundary -- with --task: that task marked done (DONE, before STOP and limits) or gone from the list (FAILED) --> [ended]
//   judging -- DONE, FAILED (consecutive failures), STALLED --> [ended]
//   judging -- the rest would end it DONE, reviews configured --> [reviewing] -- approved: DONE --> [ended]
//   reviewing -- changes, no verdict --> [boundary] (the findings in the next prompt); a signal, stop --now --> [ending]
//   boundary -- every task marked done, checks gate them --> [verifying] -- they pass: NO_WORK --> [ended]
//   verifying -- a check fails --> [boundary] (an iteration with no task, the output in its prompt)
//   judging -- <ask>QUESTION</ask> (--on-ask wait) --> [needsHuman] -- answered (ANSWER file) --> [boundary]
//   needsHuman -- signal, failed write, STOP, stop --now, active: false --> [ended] (the question stays open)
//   needsHuman -- with --task: that task marked done --> [ended] (DONE; the question is dropped unanswered)
//   running -- agent missing, or a usage limit with --on-limit stop --> [ended] (FAILED)
//   running -- a usage limit resetting later than --max-wait, a fallback agent free --> [boundary] (same iteration)
//
// A trusted plan change (`ralph set`, a tightening) is applied in any phase; active: false acts at a boundary.
// A signal is one transition: from running or judging to ending (the agent's tree or the checks are ended,
// the iteration is recorded as interrupted, never judged), from anywhere else straight to ended.
import { describeTask, firstIncomplete } from "../judge/tasks.js";
import { buildPrompt } from "../run/build-prompt.js";
import { taskForPrompt } from "../run/task-prompt.js";
import { pickAgent } from "./agent-choice.js";
import { agentExited, limitHit, settle, unjudged } from "./judging.js";
import { reviewOpen } from "./reviewing.js";
import { whileReviewing } from "./while-reviewing.js";
import type { Attempt, Input, Machine, Phase, Step } from "./phase.js";
import { whileNeedsHuman } from "./questions.js";
import { noWorkLeft, whileVerifying } from "./verifying.js";
import { gatesOf } from "./task-gate.js";
import {
  betweenIterations,
  end,
  interrupted,
  limitReached,
  logs,
  onlyTask,
  onTrustedPlan,
  stay,
  taskFinished,
  to,
  writeFailed,
} from "./transitions.js";
import type { GateVerdict } from "../spend/spend-gate.js";

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
    case "reviewing":
      return whileReviewing(machine, phase, input);
    case "waitingLimit":
      return whileWaiting(machine, phase, input);
    case "verifying":
      return whileVerifying(machine, phase, input);
    case "needsHuman":
      return whileNeedsHuman(machine, input);
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

function atBoundary(machine: Machine, input: Input): Step {
  // With --task, the last iteration finishing the task is that iteration's verdict: it outranks STOP and limits.
  const finished = input.type === "sentinel" ? taskFinished(machine) : null;
  if (finished) return end(machine, finished);
  const common = betweenIterations(machine, input);
  if (common) return common;
  switch (input.type) {
    case "sentinel": {
      if (input.pause) {
        const tally = { ...machine.tally, lastAction: "paused by PAUSE file" };
        return {
          machine: to(machine, { id: "paused" }, { tally }),
          effects: [{ kind: "record", entries: [...logs("paused"), { kind: "event", body: { type: "paused" } }] }],
        };
      }
      return startIteration(machine, input.nowMs, input.budget ?? null);
    }
    // Nothing runs at a boundary: a late report from an ended agent or check, or a poll, changes nothing. (Signals, failed writes and new plans: betweenIterations above.)
    case "signal":
    case "recordFailed":
    case "desired":
    case "control":
    case "tick":
    case "agentResult":
    case "agentExited":
    case "limitHit":
    case "checked":
    case "reviewed":
      return stay(machine);
    default: {
      const unreachable: never = input;
      throw new Error(`unknown input ${JSON.stringify(unreachable)}`);
    }
  }
}

/** Limits and budgets, then the task, then the agent. */
function startIteration(machine: Machine, nowMs: number, budget: GateVerdict): Step {
  const list = machine.tasks;
  const file = machine.plan.tasks ?? "the task list";
  const only = machine.config.onlyTask;
  const mine = onlyTask(machine);
  const limit = limitReached(machine, nowMs);
  if (limit) return end(machine, limit);
  if (budget?.kind === "exceeded") return end(machine, { reason: "BUDGET_EXCEEDED", detail: budget.detail });
  if (budget?.kind === "wait") return budgetWait(machine, budget, nowMs);
  let task: string | null = null;
  let taskText: string | null = null;
  if (list) {
    if (!list.ok) return end(machine, { reason: "FAILED", detail: `task list ${list.file}: ${list.message}` });
    if (only && !mine) return end(machine, { reason: "FAILED", detail: `task ${only} is not in ${file}` });
    const next = mine ?? firstIncomplete(list.tasks);
    // Every task marked done: NO_WORK once the checks pass; while they fail, iterations without a task.
    // A review that did not approve keeps the run going too: its findings are the work left.
    if (!next && machine.tally.gatesOk !== false && !reviewOpen(machine)) return noWorkLeft(machine);
    task = next ? describeTask(next) : null;
    taskText = next
      ? taskForPrompt(next, file, list.format, gatesOf(machine.plan.completionCriteria).length > 0)
      : null;
  }
  const iteration = machine.tally.iteration + 1;
  const { question, answer } = machine.tally;
  const answered = question && answer !== null ? { question: question.text, answer } : null;
  const agent = pickAgent(machine.config, machine.tally.limitedUntil, nowMs);
  const attempt: Attempt = {
    iteration,
    agent,
    task,
    prompt: buildPrompt({
      prompt: machine.plan.prompt,
      task: taskText,
      failingChecks: machine.tally.failingChecks,
      reviewFindings: machine.tally.reviewFindings,
      answered,
    }),
  };
  // The prompt carries the answer from here on: the question is closed.
  const tally = {
    ...machine.tally,
    iteration,
    task,
    question: null,
    answer: null,
    lastAction: `iteration ${iteration} started`,
  };
  return {
    machine: to(machine, { id: "running", attempt, resultSeen: false }, { tally }),
    effects: [
      {
        kind: "record",
        entries: [
          {
            kind: "event",
            body: { type: "iteration_started", iteration, max_iterations: machine.plan.maxIterations, task, agent },
          },
        ],
      },
      ...(question ? [{ kind: "clearAnswer" } as const] : []),
      { kind: "spawn", attempt },
    ],
  };
}

/** A spent daily or weekly budget with `budget.on_exhausted: wait`: no iteration until the next period begins. */
function budgetWait(machine: Machine, budget: GateVerdict & { kind: "wait" }, nowMs: number): Step {
  const iteration = machine.tally.iteration + 1;
  const resumeAt = new Date(budget.untilMs).toISOString();
  const tally = { ...machine.tally, lastAction: `budget spent: waiting until ${resumeAt}` };
  return {
    machine: to(
      machine,
      { id: "waitingLimit", iteration, resumeAtMs: Math.max(budget.untilMs, nowMs), budget: budget.detail },
      { tally },
    ),
    effects: [
      {
        kind: "record",
        entries: [
          {
            kind: "event",
            body: {
              type: "waiting_limit",
              iteration,
              message: budget.detail,
              reset_at: resumeAt,
              resume_at: resumeAt,
              budget: true,
            },
          },
          ...logs(
            `${budget.detail}; waiting until ${resumeAt} (budget.on_exhausted: wait), then starting iteration ${iteration}`,
          ),
        ],
      },
      { kind: "sleep", untilMs: budget.untilMs },
    ],
  };
}

function whilePaused(machine: Machine, input: Input): Step {
  const common = betweenIterations(machine, input, logs("resumed (to stop)"));
  if (common) return common;
  switch (input.type) {
    case "sentinel": {
      if (input.pause) return stay(machine);
      const tally = { ...machine.tally, lastAction: "resumed" };
      return {
        machine: to(machine, { id: "boundary" }, { tally }),
        effects: [
          { kind: "record", entries: [...logs("resumed"), { kind: "event", body: { type: "resumed" } }] },
          { kind: "look", what: "all" },
        ],
      };
    }
    case "control":
      return { machine, effects: [{ kind: "look", what: "control" }] };
    // Paused between iterations: no agent or check is running, and a tick means nothing. (Signals, failed writes and new plans: betweenIterations above.)
    case "signal":
    case "recordFailed":
    case "desired":
    case "tick":
    case "agentResult":
    case "agentExited":
    case "limitHit":
    case "checked":
    case "reviewed":
      return stay(machine);
    default: {
      const unreachable: never = input;
      throw new Error(`unknown input ${JSON.stringify(unreachable)}`);
    }
  }
}

function whileRunning(machine: Machine, phase: Phase & { id: "running" }, input: Input): Step {
  switch (input.type) {
    case "signal":
      return {
        machine: to(machine, { id: "ending", ending: interrupted(input), attempt: phase.attempt, judged: null }),
        effects: [{ kind: "endTree", why: "interrupted" }],
      };
    case "recordFailed":
      return {
        machine: to(machine, { id: "ending", ending: writeFailed(input), attempt: phase.attempt, judged: null }),
        effects: [{ kind: "endTree", why: "write_failed" }],
      };
    case "desired":
      return onTrustedPlan(machine, input);
    case "sentinel":
      if (!input.stopNow) return stay(machine);
      return {
        machine: to(machine, {
          id: "ending",
          ending: { reason: "STOPPED", detail: "stop --now ended the agent" },
          attempt: phase.attempt,
          judged: null,
        }),
        effects: [{ kind: "endTree", why: "stop_now" }],
      };
    case "control":
      return { machine, effects: [{ kind: "look", what: "sentinels" }] };
    case "agentResult":
      return stay(to(machine, { ...phase, resultSeen: true }));
    case "agentExited":
      return agentExited(machine, phase.attempt, input.run, input.tasks ?? null);
    case "limitHit":
      return input.run.endedBy === null
        ? limitHit(machine, phase.attempt, input)
        : agentExited(machine, phase.attempt, input.run);
    // No timer runs and no check or review is under way while the agent works.
    case "tick":
    case "checked":
    case "reviewed":
      return stay(machine);
    default: {
      const unreachable: never = input;
      throw new Error(`unknown input ${JSON.stringify(unreachable)}`);
    }
  }
}

function whileJudging(machine: Machine, phase: Phase & { id: "judging" }, input: Input): Step {
  switch (input.type) {
    case "signal":
      return {
        machine: to(machine, { id: "ending", ending: interrupted(input), attempt: phase.attempt, judged: phase.run }),
        effects: [{ kind: "endTree", why: "interrupted" }],
      };
    case "recordFailed":
      return {
        machine: to(machine, { id: "ending", ending: writeFailed(input), attempt: phase.attempt, judged: phase.run }),
        effects: [{ kind: "endTree", why: "write_failed" }],
      };
    case "desired":
      return onTrustedPlan(machine, input);
    case "checked":
      return settle(machine, phase, input);
    // stop --now acts while checks or the stall check's git run: they are ended, the iteration is recorded unjudged.
    case "control":
      return { machine, effects: [{ kind: "look", what: "sentinels" }] };
    case "sentinel":
      if (!input.stopNow) return stay(machine);
      return {
        machine: to(machine, {
          id: "ending",
          ending: { reason: "STOPPED", detail: "stop --now ended the checks" },
          attempt: phase.attempt,
          judged: phase.run,
        }),
        effects: [{ kind: "endTree", why: "stop_now" }],
      };
    // The agent has already exited, and no timer runs while judging; no review runs yet.
    case "tick":
    case "agentResult":
    case "agentExited":
    case "limitHit":
    case "reviewed":
      return stay(machine);
    default: {
      const unreachable: never = input;
      throw new Error(`unknown input ${JSON.stringify(unreachable)}`);
    }
  }
}

function whileWaiting(machine: Machine, phase: Phase & { id: "waitingLimit" }, input: Input): Step {
  const common = betweenIterations(machine, input);
  if (common) return common;
  switch (input.type) {
    case "sentinel": {
      const limit = limitReached(machine, input.nowMs);
      if (limit) return end(machine, limit);
      if (input.nowMs < phase.resumeAtMs) return stay(machine);
      const tally = { ...machine.tally, lastAction: phase.budget ? "budget wait over" : "usage limit wait over" };
      const line = phase.budget
        ? `budget wait over; the budgets are checked again before iteration ${phase.iteration}`
        : `usage limit wait over; retrying iteration ${phase.iteration}`;
      return {
        machine: to(machine, { id: "boundary" }, { tally }),
        effects: [
          { kind: "record", entries: logs(line) },
          { kind: "look", what: "all" },
        ],
      };
    }
    case "control":
    case "tick":
      return { machine, effects: [{ kind: "look", what: "control" }] };
    // Waiting out a usage limit: no agent or check is running. (Signals, failed writes and new plans: betweenIterations above.)
    case "signal":
    case "recordFailed":
    case "desired":
    case "agentResult":
    case "agentExited":
    case "limitHit":
    case "checked":
    case "reviewed":
      return stay(machine);
    default: {
      const unreachable: never = input;
      throw new Error(`unknown input ${JSON.stringify(unreachable)}`);
    }
  }
}

/** Ending with an agent or checks still in flight: wait for them, record the iteration unjudged, end. */
function whileEnding(machine: Machine, phase: Phase & { id: "ending" }, input: Input): Step {
  switch (input.type) {
    case "signal":
      // A signal outranks a stop --now already under way: the runner must die of it.
      if (phase.ending.reason === "INTERRUPTED") return stay(machine);
      return stay(to(machine, { ...phase, ending: interrupted(input) }));
    case "desired":
      return onTrustedPlan(machine, input);
    case "agentExited":
    case "limitHit":
      if (phase.judged) return stay(machine);
      return unjudged(machine, phase, input.run);
    case "checked":
      return phase.judged ? unjudged(machine, phase, phase.judged) : stay(machine);
    case "reviewed":
      return phase.judged ? unjudged(machine, phase, phase.judged, input.reviews) : stay(machine);
    // The ending is decided: a failed write, STOP, PAUSE, a poll or the agent's result change nothing.
    case "recordFailed":
    case "sentinel":
    case "control":
    case "tick":
    case "agentResult":
      return stay(machine);
    default: {
      const unreachable: never = input;
      throw new Error(`unknown input ${JSON.stringify(unreachable)}`);
    }
  }
}
