// The `type: review` criterion in the engine: once the other criteria (promise, tasks, checks) would end the
// run DONE, the reviewers run; only their approval makes it DONE, and their findings go into the next prompt.
import type { Criterion, CriterionVerdict } from "../judge/criteria.js";
import { isComplete, type ClaimInput } from "../judge/judge-completion.js";
import type { ClaimVerdict } from "../judge/claim.js";
import type { RecordEntry } from "../run/run-record.js";
import type { Input, JudgingPhase, Machine, ReviewResult, Step, Tally } from "./phase.js";
import { logs, to } from "./transitions.js";
import { fenceFor } from "../util/fence-for.js";
import { clip } from "../util/clip.js";
import { addTokens } from "./iteration-facts.js";

export { reviewOpen } from "./transitions.js";

/** The review criteria among `criteria`. */
export function reviewsOf(criteria: readonly Criterion[]): Criterion[] {
  return criteria.filter((criterion) => criterion.type === "review");
}

/** Every criterion but the reviews: what the checks run. */
export function withoutReviews(criteria: readonly Criterion[]): Criterion[] {
  return criteria.filter((criterion) => criterion.type !== "review");
}

/** Whether the iteration would end the run DONE but for its reviews: the promise, the checks and the task list say so. */
export function awaitsReview(
  input: ClaimInput,
  claim: ClaimVerdict | null,
  checked: readonly CriterionVerdict[],
  openTasks: number,
): boolean {
  if (!input.mayCheck || openTasks > 0 || reviewsOf(input.criteria).length === 0) return false;
  const others = withoutReviews(input.criteria);
  // Only reviews, and no promise: like any criterion without a promise, they judge every iteration.
  if (others.length === 0 && claim === null) return true;
  return isComplete({ ...input, criteria: others }, claim, checked);
}

/** judging → reviewing: the reviewers start on the iteration the checks passed. */
export function startReview(machine: Machine, phase: JudgingPhase, checked: Input & { type: "checked" }): Step {
  const reviews = reviewsOf(machine.plan.completionCriteria);
  const { iteration } = phase.attempt;
  const tally = { ...machine.tally, lastAction: `iteration ${iteration}: the review runs` };
  return {
    machine: to(machine, { id: "reviewing", judging: phase, checked }, { tally }),
    effects: [
      {
        kind: "record",
        entries: logs(
          `the other criteria are met: ${reviews.map((review) => review.check).join(", ")} review${reviews.length === 1 ? "s" : ""} iteration ${iteration} (read-only)`,
        ),
      },
      { kind: "review", iteration, task: phase.attempt.prompt.toString("utf8"), criteria: reviews },
    ],
  };
}

/** The reviews as criterion verdicts: passed only on approval; the findings are their output. */
export function reviewVerdicts(reviews: readonly ReviewResult[]): CriterionVerdict[] {
  return reviews.map((review) => ({
    type: "review",
    check: review.criterion.check,
    passed: review.verdict === "approve",
    detail: verdictDetail(review),
    outputTail: review.findings,
    durationMs: review.durationMs,
  }));
}

function verdictDetail(review: ReviewResult): string {
  switch (review.verdict) {
    case "approve":
      return "the reviewer approved";
    case "changes":
      return "the reviewer asked for changes";
    case "none":
      return `no verdict: ${review.reason ?? "the reviewer gave none"}`;
    default: {
      const unreachable: never = review.verdict;
      throw new Error(`unknown verdict ${String(unreachable)}`);
    }
  }
}

/** The review_verdict events and log lines of the reviews of `iteration`. */
export function reviewEntries(iteration: number, reviews: readonly ReviewResult[]): RecordEntry[] {
  return reviews.flatMap((review): RecordEntry[] => [
    {
      kind: "event",
      body: {
        type: "review_verdict",
        iteration,
        reviewer: review.criterion.check,
        agent: review.agent,
        verdict: review.verdict,
        reason: review.reason,
        findings: review.findings,
        cost_usd: review.costUsd,
        duration_ms: review.durationMs,
      },
    },
    ...logs(
      `review by ${review.criterion.check}: ${review.verdict === "none" ? `not approved (${review.reason ?? "no verdict"})` : review.verdict}${review.costUsd !== null ? ` ($${review.costUsd.toFixed(4)})` : ""}`,
    ),
  ]);
}

/** The next prompt's section on reviews that did not approve (empty when all approved). */
export function reviewContext(reviews: readonly ReviewResult[]): string {
  const open = reviews.filter((review) => review.verdict !== "approve");
  return open
    .map((review) => {
      const head =
        review.verdict === "changes"
          ? `The reviewer (${review.criterion.check}) asked for changes.`
          : `The review (${review.criterion.check}) did not approve: ${review.reason ?? "no verdict"}.`;
      if (review.findings === "") return head;
      const fence = fenceFor(review.findings, "`");
      return `${head} Its findings:\n${fence}\n${review.findings}\n${fence}`;
    })
    .join("\n\n");
}

/** The tally once the reviewers' spend is added (each reviewer started is an agent call). */
export function withReviewSpend(tally: Tally, reviews: readonly ReviewResult[]): Tally {
  return reviews.reduce(
    (sum, review) => ({
      ...sum,
      calls: sum.calls + (review.ran === false ? 0 : 1),
      costUsd: sum.costUsd + (review.costUsd ?? 0),
      tokens: addTokens(sum.tokens, review.tokens),
    }),
    tally,
  );
}

/** The tally's record of the last review. */
export function lastReview(iteration: number, reviews: readonly ReviewResult[]): Tally["review"] {
  const open = reviews.find((review) => review.verdict !== "approve");
  const shown = open ?? reviews[0];
  if (shown === undefined) return null;
  const detail =
    shown.verdict === "none"
      ? (shown.reason ?? "no verdict")
      : (shown.findings
          .split("\n")
          .find((line) => line.trim() !== "")
          ?.trim() ?? "");
  return { iteration, verdict: open ? open.verdict : "approve", detail: clip(detail, 200) };
}
