// Whether an iteration finished the work: the promise in the final message and/or the completion criteria.
// One judgement for `ralph run` and the in-session hook, in two pure halves around the checks, so the
// engine can run the checks as an effect and both modes follow the same rules.
import { checkCriteria, type CriteriaContext, type Criterion, type CriterionVerdict } from "./criteria.js";
import { findClaim, type ClaimVerdict } from "./claim.js";

/** What the judgement of one iteration starts from. */
export interface ClaimInput {
  promiseText: string | null;
  finalMessage: string | null;
  prompt: string;
  criteria: readonly Criterion[];
  /** False when checks must not run (a failed iteration, a dry run): nothing can complete then. */
  mayCheck: boolean;
}

/** The claim in the final message, and the criteria to check because of it. */
export interface WeighedClaim {
  /** Null when the run has no promise. */
  claim: ClaimVerdict | null;
  /** Empty when no check is to run. */
  toCheck: Criterion[];
}

/** What one iteration's output and the criteria say. */
export interface CompletionJudgement {
  done: boolean;
  claim: ClaimVerdict | null;
  /** Empty when no check ran. */
  verdicts: CriterionVerdict[];
}

/** With a promise, criteria are checked only once it is claimed; without one, after every iteration. */
export function weighClaim(input: ClaimInput): WeighedClaim {
  const claim =
    input.promiseText !== null ? findClaim(input.finalMessage ?? "", input.promiseText, input.prompt) : null;
  const check = input.mayCheck && input.criteria.length > 0 && (claim === null || claim.found);
  return { claim, toCheck: check ? [...input.criteria] : [] };
}

/**
 * Done with a promise: it is claimed and every criterion passes. Without one: criteria exist, ran, and
 * all pass (never vacuously, e.g. in a dry run).
 */
export function isComplete(
  input: ClaimInput,
  claim: ClaimVerdict | null,
  verdicts: readonly CriterionVerdict[],
): boolean {
  const criteriaPass =
    input.criteria.length === 0 || (verdicts.length > 0 && verdicts.every((verdict) => verdict.passed));
  if (!input.mayCheck) return false;
  return claim !== null ? claim.found && criteriaPass : input.criteria.length > 0 && criteriaPass;
}

/** Both halves with the checks in between, for callers that run the checks themselves (the hook). */
export async function judgeCompletion(input: ClaimInput, context: CriteriaContext): Promise<CompletionJudgement> {
  const { claim, toCheck } = weighClaim(input);
  const verdicts = toCheck.length > 0 ? await checkCriteria(toCheck, context) : [];
  return { done: isComplete(input, claim, verdicts), claim, verdicts };
}
