// Decides whether the iteration that just ended completes the loop: the promise in the last message, then the criteria.
import { agentEnvironment } from "../agents/env-scrub.js";
import { checkCriteria, failingContext, type CriterionVerdict } from "../loop/criteria.js";
import { findPromise, type PromiseVerdict } from "../loop/promise.js";
import type { RunRecord } from "../loop/run-record.js";
import type { HookLoopState } from "./hook-state.js";

/** The verdict on one ended iteration. */
export interface StopVerdict {
  done: boolean;
  promise: PromiseVerdict | null;
  verdicts: CriterionVerdict[];
  /** Failing checks and their output, for the next prompt ("" when none failed). */
  failingChecks: string;
}

/**
 * Same rules as `ralph run`: with a promise, the loop is done when the last message claims it and every
 * criterion passes (criteria are checked only once it is claimed); without one, when criteria exist and pass.
 * Unlike `ralph run`, failing checks are reported to the next prompt whenever they ran, since in a session
 * the model cannot see their output any other way.
 */
export async function evaluateStop(
  state: HookLoopState,
  lastMessage: string | null,
  record: RunRecord,
  context: { projectDir: string; env: NodeJS.ProcessEnv; iteration: number },
): Promise<StopVerdict> {
  const promiseText = state.completionPromise;
  const promise = promiseText !== null ? findPromise(lastMessage ?? "", promiseText, state.prompt) : null;
  const criteria = state.completionCriteria;
  const shouldCheck = criteria.length > 0 && (promiseText === null || promise?.found === true);
  const verdicts = shouldCheck
    ? await checkCriteria(criteria, { cwd: context.projectDir, env: agentEnvironment(context.env, {}) })
    : [];
  for (const verdict of verdicts) {
    record.event("criteria_checked", { iteration: context.iteration, type: verdict.type, check: verdict.check, passed: verdict.passed, detail: verdict.detail });
    record.progress([["criterion", `${verdict.type}: ${verdict.check}`], ["criterion_passed", verdict.passed], ["criterion_detail", verdict.detail]]);
    record.log(`check ${verdict.passed ? "passed" : "FAILED"}: ${verdict.type}: ${verdict.check}${verdict.passed ? "" : ` (${verdict.detail})`}`);
  }
  const criteriaPass = verdicts.every((verdict) => verdict.passed);
  const done = promiseText !== null ? promise?.found === true && criteriaPass : criteria.length > 0 && criteriaPass;
  return { done, promise, verdicts, failingChecks: done ? "" : failingContext(verdicts) };
}
