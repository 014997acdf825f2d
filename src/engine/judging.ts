// The transitions around one agent run: from its exit to the verdict, a usage limit, or an unjudged record.
import { findAsk } from "../judge/ask.js";
import { failingContext } from "../judge/criteria.js";
import { isComplete, weighClaim, type ClaimInput } from "../judge/judge-completion.js";
import { describeChange, type Fingerprint } from "../judge/progress-fingerprint.js";
import type { TaskListResult } from "../judge/tasks.js";
import { iterationEntries, verdictEntries } from "../run/iteration-record.js";
import type { RecordEntry } from "../run/run-record.js";
import {
  agentReport,
  billingError,
  checksSkipped,
  failureOf,
  fallbackWaitMs,
  fatalError,
  promiseIgnored,
  withResources,
  withSpend,
} from "./iteration-facts.js";
import type {
  AgentRun,
  Attempt,
  FinishedRun,
  Input,
  JudgingPhase,
  Machine,
  Phase,
  ReviewResult,
  Step,
} from "./phase.js";
import {
  awaitsReview,
  lastReview,
  reviewContext,
  reviewEntries,
  reviewsOf,
  reviewVerdicts,
  startReview,
  withoutReviews,
  withReviewSpend,
} from "./reviewing.js";
import { chooseAfterLimit } from "./agent-choice.js";
import { askPerson } from "./questions.js";
import { end, goOn, logs, STALL_OFF, stallOffNote, tellOnce, to } from "./transitions.js";
import { failureKey, guardEnd, nextRepeat } from "./guards.js";
import { gateMarks, gatesOf, gatesVerdict, newlyMarked, openTasks, openTasksLine, withReopen } from "./task-gate.js";

function claimInput(machine: Machine, attempt: Attempt, run: FinishedRun, failure: string | null): ClaimInput {
  return {
    promiseText: machine.plan.completionPromise,
    finalMessage: run.outcome.finalMessage,
    prompt: attempt.prompt.toString("utf8"),
    criteria: machine.plan.completionCriteria,
    // A failed iteration is judged by nothing; a dry run starts nothing, the user's check commands included.
    mayCheck: !failure && !machine.config.dryRun,
  };
}

/** The progress block of an iteration whose agent could not be started. */
function missingEntries(attempt: Attempt, message: string): RecordEntry[] {
  return [
    {
      kind: "progress",
      block: [
        ["iteration", attempt.iteration],
        ["result", "agent_missing"],
        ["error", message],
      ],
    },
  ];
}

/**
 * running → judging (the checks to run), or ended when the agent could not start. A task the agent marked
 * done brings the checks that gate it, promise or not.
 */
export function agentExited(
  machine: Machine,
  attempt: Attempt,
  run: AgentRun,
  tasksAfter: TaskListResult | null = null,
): Step {
  if (run.kind === "missing") {
    return end(
      machine,
      { reason: "FAILED", detail: `agent could not be started: ${run.message}`, agentMissing: attempt.agent },
      missingEntries(attempt, run.message),
    );
  }
  const failure = failureOf(run);
  const input = claimInput(machine, attempt, run, failure);
  const { claim, toCheck } = weighClaim(input);
  const marked = newlyMarked(machine.tasks, tasksAfter);
  // The reviews are not checks: they run after them, once the rest would end the run DONE (settle).
  const criteria = withoutReviews(
    toCheck.length === 0 && marked.length > 0 && input.mayCheck ? gatesOf(machine.plan.completionCriteria) : toCheck,
  );
  const tally = { ...machine.tally, limitsInARow: 0 };
  // A dry run changes nothing, so no progress is looked for (and none reported missing).
  return {
    machine: to(machine, { id: "judging", attempt, run, claim, failure, marked, tasksAfter }, { tally }),
    effects: [
      {
        kind: "runChecks",
        iteration: attempt.iteration,
        criteria,
        fingerprint: machine.config.stallLimit > 0 && !failure && !machine.config.dryRun,
      },
    ],
  };
}

/** A usage limit: the call and its spend are recorded, the iteration is not counted; wait, or stop. */
export function limitHit(machine: Machine, attempt: Attempt, input: Input & { type: "limitHit" }): Step {
  const { limit, run } = input;
  const spent = withSpend(machine.tally, run.outcome);
  const tally = {
    ...spent,
    iteration: attempt.iteration - 1,
    limitsInARow: spent.limitsInARow + 1,
    lastAction: `usage limit: ${limit.message}`,
  };
  const entries = iterationEntries(
    agentReport(attempt, run, tally, "usage_limit", { claim: null, verdicts: [], error: limit.message, limit }),
  );
  if (machine.config.onLimit === "stop") {
    const resets = limit.resetAt ? `, resets ${limit.resetAt.toISOString()}` : "";
    return end(
      to(machine, machine.phase, { tally }),
      { reason: "FAILED", detail: `provider usage limit reached (${limit.message})${resets}; --on-limit stop` },
      entries,
    );
  }
  const resetAtMs = limit.resetAt && limit.resetAt.getTime() > input.nowMs ? limit.resetAt.getTime() : null;
  const limitedUntil = {
    ...tally.limitedUntil,
    [attempt.agent]: resetAtMs ?? input.nowMs + fallbackWaitMs(tally.limitsInARow),
  };
  const choice = chooseAfterLimit(machine.config, limitedUntil, resetAtMs, input.nowMs);
  if (choice.kind === "switch") {
    const resets = resetAtMs === null ? "at a time it did not say" : `at ${new Date(resetAtMs).toISOString()}`;
    entries.push(
      ...logs(
        `usage limit of ${attempt.agent} reached (${limit.message}); it resets ${resets}, later than --max-wait: iteration ${attempt.iteration} runs again with ${choice.to}`,
      ),
    );
    return goOn(
      to(machine, machine.phase, {
        tally: { ...tally, limitedUntil, lastAction: `usage limit of ${attempt.agent}: switching to ${choice.to}` },
      }),
      entries,
    );
  }
  const resumeAtMs = choice.untilMs;
  const resumeAt = new Date(resumeAtMs).toISOString();
  entries.push(
    {
      kind: "event",
      body: {
        type: "waiting_limit",
        iteration: attempt.iteration,
        message: limit.message,
        reset_at: limit.resetAt?.toISOString() ?? null,
        resume_at: resumeAt,
      },
    },
    ...logs(
      `usage limit reached (${limit.message}); waiting until ${resumeAt}, then retrying iteration ${attempt.iteration}`,
    ),
  );
  return {
    machine: to(
      machine,
      { id: "waitingLimit", iteration: attempt.iteration, resumeAtMs },
      { tally: { ...tally, limitedUntil } },
    ),
    effects: [
      { kind: "record", entries },
      { kind: "sleep", untilMs: resumeAtMs },
    ],
  };
}

/**
 * Records the judged iteration and decides: DONE, FAILED, STALLED, or another round. When the rest would end
 * the run DONE and reviews are configured, the reviewers run first (`reviewed` is then their answers).
 */
export function settle(
  machine: Machine,
  phase: JudgingPhase,
  input: Input & { type: "checked" },
  reviewed: ReviewResult[] | null = null,
): Step {
  const { attempt, run, claim, failure } = phase;
  const checked = input.verdicts;
  const gate = gateMarks(machine, phase, checked);
  const open = openTasks(gate.tasks, machine.config.onlyTask);
  const judged = claimInput(machine, attempt, run, failure);
  if (reviewed === null && awaitsReview(judged, claim, checked, open.length)) return startReview(machine, phase, input);
  const reviews = reviewed ?? [];
  const verdicts = [...checked, ...reviewVerdicts(reviews)];
  const wanted = reviewsOf(machine.plan.completionCriteria).length;
  const reviewing = wanted > 0;
  // Before any review ran (a task is open), complete is what the rest says; DONE needs the reviews too.
  const complete =
    reviewing && reviews.length === 0 ? awaitsReview(judged, claim, checked, 0) : isComplete(judged, claim, verdicts);
  // A task list is a criterion: nothing is done while a task is open. Every reviewer must have answered.
  const done = complete && open.length === 0 && reviews.length >= wanted;
  const criteriaPass = checked.every((verdict) => verdict.passed);
  const failures = failure ? machine.tally.failures + 1 : 0;
  const gates = gatesOf(machine.plan.completionCriteria);
  const reviewState =
    reviews.length > 0
      ? { review: lastReview(attempt.iteration, reviews), reviewFindings: done ? "" : reviewContext(reviews) }
      : { reviewFindings: "" };
  let tally = {
    ...withReviewSpend(withResources(withSpend(machine.tally, run.outcome), run), reviews),
    ...reviewState,
    failures,
    gatesOk: gatesVerdict(gates, verdicts),
    repeat: nextRepeat(machine.tally.repeat, failureKey(failure, verdicts, run.stderrTail)),
    lastAction: `iteration ${attempt.iteration} ${failure ? `failed: ${failure}` : "finished"}`,
  };
  // A proven completion outranks a question asked in the same message: the run is DONE, the question logged.
  const ask = failure ? null : findAsk(run.outcome.finalMessage ?? "", attempt.prompt.toString("utf8"));
  const waits = ask?.found === true && !done && machine.config.onAsk === "wait";
  const result = failure
    ? run.endedBy === "timeout"
      ? "timeout"
      : "failed"
    : done
      ? "done"
      : waits
        ? "asked"
        : "continue";
  const criteria = machine.plan.completionCriteria;
  const explained = {
    promiseIgnored: promiseIgnored(
      claim,
      failure,
      verdicts.every((verdict) => verdict.passed),
    ),
    checksSkipped: checksSkipped(criteria.length, verdicts.length, failure, machine.config.dryRun, claim),
  };
  const entries = [
    ...verdictEntries(attempt.iteration, verdicts),
    ...reviewEntries(attempt.iteration, reviews),
    ...iterationEntries(agentReport(attempt, run, tally, result, { claim, verdicts, error: failure, ...explained })),
    ...gate.entries,
  ];
  let settled = to(machine, machine.phase, { tally });
  const stray = machine.plan.completionPromise === null && !failure ? strayPromise(run.outcome.finalMessage) : null;
  if (stray !== null) {
    const told = tellOnce(
      settled,
      "stray-promise",
      `the final message holds <promise>${stray}</promise>, but this run has no completion promise, so it ends nothing; to make it count: ralph set completion_promise=${JSON.stringify(stray)}`,
    );
    settled = told.machine;
    entries.push(...told.entries);
  }
  const unseen = reviews.find((review) => review.note !== undefined)?.note;
  if (unseen !== undefined) {
    const told = tellOnce(settled, "review-unseen", unseen);
    settled = told.machine;
    entries.push(...told.entries);
  }
  const billing = machine.config.onBillingError === "fail" ? billingError(run) : null;
  if (billing) {
    const detail = `billing error: ${billing}`;
    const why = `${detail}; waiting or retrying cannot fix this: add credit or change the plan, then ralph continue (--on-billing-error wait treats it as a usage limit)`;
    return withReopen(guardEnd(settled, "billing", { reason: "FAILED", detail }, entries, why), gate.reopened);
  }
  const fatal = failure ? fatalError(run) : null;
  if (fatal)
    return withReopen(
      end(settled, { reason: "FAILED", detail: `${fatal}; no retry can fix this, so the run ends now` }, entries),
      gate.reopened,
    );
  if (failure) {
    entries.push(
      ...logs(
        `iteration ${attempt.iteration} failed (${failure}); ${failures}/${machine.config.maxFailures} consecutive failures`,
      ),
    );
    // A failure the consecutive-failure rule ends the run for is not hidden behind the cap.
    const repeated = sameFailure(settled, entries, failures < machine.config.maxFailures);
    if (repeated) return withReopen(repeated, gate.reopened);
    if (failures >= machine.config.maxFailures)
      return withReopen(
        end(
          settled,
          { reason: "FAILED", detail: `${failures} consecutive failed iterations, last: ${failure}` },
          entries,
        ),
        gate.reopened,
      );
    return withReopen(
      goOn(
        to(settled, settled.phase, { tally: { ...tally, failingChecks: gate.context || tally.failingChecks } }),
        entries,
      ),
      gate.reopened,
    );
  }
  if (ask && !ask.found && ask.reason !== "absent")
    entries.push(...logs(`an <ask> in the final message was not taken as a question: ${ask.detail}`));
  if (ask?.found && !waits) {
    const why = done ? "the run is done, so nobody is asked" : "--on-ask continue: going on without an answer";
    entries.push(...logs(`the agent asked: ${JSON.stringify(ask.question)} (${why})`));
  }
  if (done) {
    entries.push(
      ...logs(
        criteria.length > 0
          ? "LOOP_COMPLETE: all criteria met."
          : "LOOP_COMPLETE: the promise was found (no completion criteria are set).",
      ),
    );
    const promise = machine.plan.completionPromise;
    const approved =
      reviews.length > 0 ? `; ${reviews.map((review) => review.criterion.check).join(", ")} approved` : "";
    return end(
      settled,
      {
        reason: "DONE",
        detail: `${promise ? `promise <promise>${promise}</promise> found${criteria.length ? " and criteria passed" : ""}` : "all criteria passed"}${approved}`,
      },
      entries,
    );
  }
  const repeated = sameFailure(settled, entries);
  if (repeated) return withReopen(repeated, gate.reopened);
  if (complete && open.length > 0)
    entries.push(...logs(openTasksLine(open, machine.plan.tasks ?? "the task list", claim?.found === true)));
  const failingChecks = gate.context || (claim?.found && !criteriaPass ? failingContext(checked) : "");
  if (reviews.some((review) => review.verdict !== "approve"))
    entries.push(...logs("the review did not approve: the run goes on, with its findings in the next prompt"));
  if (failingChecks && !gate.context)
    entries.push(...logs("promise claimed but a completion check failed; its output goes into the next prompt"));
  tally = { ...tally, failingChecks };
  if (ask?.found && waits)
    return withReopen(
      askPerson(settled, attempt.iteration, ask.question, tally, entries, input.fingerprint),
      gate.reopened,
    );
  return withReopen(
    afterProgress(to(settled, settled.phase, { tally }), attempt, input.fingerprint, entries),
    gate.reopened,
  );
}

/** FAILED when the same failure came `--same-failure-limit` iterations in a row (MAX_ITERATIONS at the cap, when `yieldsToCap`), else null. */
function sameFailure(settled: Machine, entries: RecordEntry[], yieldsToCap = true): Step | null {
  const { repeat } = settled.tally;
  const limit = settled.config.sameFailureLimit;
  if (!repeat || limit === 0 || repeat.count < limit) return null;
  const detail = `the same failure ${repeat.count} times in a row: ${repeat.what}`;
  return guardEnd(
    settled,
    "same_failure",
    { reason: "FAILED", detail },
    entries,
    `${detail}; another iteration would not change it (--same-failure-limit ${limit}; 0 turns this guard off)`,
    yieldsToCap ? detail : null,
  );
}

/** Stall detection: the progress fingerprint after the iteration against the one before; STALLED or on. */
function afterProgress(settled: Machine, attempt: Attempt, now: Fingerprint | null, entries: RecordEntry[]): Step {
  const limit = settled.config.stallLimit;
  if (limit === 0 || now === null) return goOn(settled, entries);
  if (!now.ok) {
    // Said once, not after every iteration: the guard is on by default, also where there is no git.
    const told = tellOnce(settled, STALL_OFF, stallOffNote(now.message));
    entries.push(...told.entries);
    return goOn(to(told.machine, settled.phase, { tally: { ...settled.tally, fingerprint: now } }), entries);
  }
  const before = settled.tally.fingerprint;
  const change = before ? describeChange(before, now) : "first fingerprint";
  const stalled = change === null ? settled.tally.stalled + 1 : 0;
  const tally = { ...settled.tally, fingerprint: now, stalled };
  entries.push(
    ...logs(
      change === null
        ? `no progress in iteration ${attempt.iteration} (${stalled}/${limit}): git HEAD ${now.head.slice(0, 12)}, working tree and task list unchanged`
        : `progress in iteration ${attempt.iteration}: ${change}`,
    ),
  );
  const next = to(settled, settled.phase, { tally });
  if (stalled >= limit) {
    const detail = `${stalled} consecutive iterations without a change to the git tree, HEAD or task list`;
    return guardEnd(
      next,
      "stalled",
      { reason: "STALLED", detail },
      entries,
      `${detail}; the run ends STALLED (--stall-limit ${limit}; 0 turns this guard off)`,
      `no progress was seen in the last ${stalled} iterations (no change to the git tree, HEAD or task list)`,
    );
  }
  return goOn(next, entries);
}

/** ending → ended: the iteration is recorded with its spend, never judged. */
export function unjudged(
  machine: Machine,
  phase: Phase & { id: "ending" },
  run: AgentRun,
  reviews: readonly ReviewResult[] = [],
): Step {
  const { attempt, ending } = phase;
  if (run.kind === "missing") {
    return end(machine, ending, missingEntries(attempt, run.message));
  }
  const tally = {
    ...withReviewSpend(withResources(withSpend(machine.tally, run.outcome), run), reviews),
    lastAction: `iteration ${attempt.iteration} ended: ${ending.detail}`,
  };
  const result = ending.reason === "INTERRUPTED" ? "interrupted" : "stopped";
  const entries = iterationEntries(
    agentReport(attempt, run, tally, result, { claim: null, verdicts: [], error: failureOf(run) }),
  );
  return end(to(machine, phase, { tally }), ending, entries);
}

/** The text of a `<promise>…</promise>` in a final message (for a run that set no promise to look for), or null. */
function strayPromise(finalMessage: string | null): string | null {
  const match = /<promise>([^<\n]{1,200})<\/promise>/.exec(finalMessage ?? "");
  return match?.[1]?.trim() || null;
}
