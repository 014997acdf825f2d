// Whether an iteration finished the work: the promise in the final message and/or the completion criteria.
// One judgement for `ralph run` and the in-session hook, so both follow the same rules.
import { checkCriteria, type Criterion, type CriterionVerdict } from "./criteria.js";
import { findPromise, type PromiseVerdict } from "./promise.js";
import type { RunRecord } from "./run-record.js";

/** What one iteration's output and the criteria say. */
export interface CompletionJudgement {
  done: boolean;
  /** Null when the run has no promise. */
  promise: PromiseVerdict | null;
  /** Empty when no check ran. */
  verdicts: CriterionVerdict[];
}

/** What the judgement needs. */
export interface JudgeInput {
  promiseText: string | null;
  finalMessage: string | null;
  prompt: string;
  criteria: Criterion[];
  /** False when checks must not run (a failed iteration, a dry run). */
  mayCheck: boolean;
  cwd: string;
  tasksFile?: string | undefined;
  env?: NodeJS.ProcessEnv;
  signal?: AbortSignal;
  record: RunRecord;
  iteration: number;
}

/**
 * With a promise: done when the final message claims it and every criterion passes (criteria run only
 * once it is claimed). Without one: done when criteria exist, ran, and all pass. Each verdict is recorded.
 */
export async function judgeCompletion(input: JudgeInput): Promise<CompletionJudgement> {
  const promise = input.promiseText !== null ? findPromise(input.finalMessage ?? "", input.promiseText, input.prompt) : null;
  const shouldCheck = input.mayCheck && input.criteria.length > 0 && (promise === null || promise.found);
  const verdicts = shouldCheck
    ? await checkCriteria(input.criteria, {
        cwd: input.cwd,
        ...(input.tasksFile ? { tasksFile: input.tasksFile } : {}),
        ...(input.env ? { env: input.env } : {}),
        ...(input.signal ? { signal: input.signal } : {}),
      })
    : [];
  for (const verdict of verdicts) recordVerdict(input.record, input.iteration, verdict);
  // Criteria pass only when they ran and every one passed (never vacuously, e.g. in a dry run).
  const criteriaPass = input.criteria.length === 0 || (verdicts.length > 0 && verdicts.every((verdict) => verdict.passed));
  const done = input.mayCheck && (promise !== null ? promise.found && criteriaPass : input.criteria.length > 0 && criteriaPass);
  return { done, promise, verdicts };
}

function recordVerdict(record: RunRecord, iteration: number, verdict: CriterionVerdict): void {
  record.event("criteria_checked", { iteration, criterion: verdict.type, check: verdict.check, passed: verdict.passed, detail: verdict.detail });
  record.progress([["criterion", `${verdict.type}: ${verdict.check}`], ["criterion_passed", verdict.passed], ["criterion_detail", verdict.detail]]);
  record.log(`check ${verdict.passed ? "passed" : "FAILED"}: ${verdict.type}: ${verdict.check}${verdict.passed ? "" : ` (${verdict.detail})`}`);
}
