// Decides whether the iteration that just ended completes the loop: the promise in the last message, then the criteria.
import { agentEnvironment } from "../agents/env-scrub.js";
import { failingContext } from "../loop/criteria.js";
import { judgeCompletion, type CompletionJudgement } from "../loop/judge-completion.js";
import type { RunRecord } from "../loop/run-record.js";
import type { HookLoopState } from "./hook-state.js";

/** The verdict on one ended iteration. */
export interface StopVerdict extends CompletionJudgement {
  /** Failing checks and their output, for the next prompt ("" when none failed). */
  failingChecks: string;
}

/**
 * Same rules as `ralph run` (judgeCompletion). Unlike `ralph run`, failing checks are reported to the next
 * prompt whenever they ran, since in a session the model cannot see their output any other way.
 */
export async function evaluateStop(
  state: HookLoopState,
  lastMessage: string | null,
  record: RunRecord,
  context: { projectDir: string; env: NodeJS.ProcessEnv; iteration: number },
): Promise<StopVerdict> {
  const judgement = await judgeCompletion({
    promiseText: state.completionPromise,
    finalMessage: lastMessage,
    prompt: state.prompt,
    criteria: state.completionCriteria,
    mayCheck: true,
    cwd: context.projectDir,
    env: agentEnvironment(context.env, {}),
    record,
    iteration: context.iteration,
  });
  return { ...judgement, failingChecks: judgement.done ? "" : failingContext(judgement.verdicts) };
}
