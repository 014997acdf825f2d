// Decides whether the iteration that just ended completes the loop: the promise in the last message, then the criteria.
import { agentEnvironment } from "../agents/env-scrub.js";
import { failingContext } from "../judge/criteria.js";
import { judgeCompletion, type CompletionJudgement } from "../judge/judge-completion.js";
import type { HookLoop } from "./hook-loop-file.js";

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
  loop: HookLoop,
  lastMessage: string | null,
  context: { projectDir: string; env: NodeJS.ProcessEnv },
): Promise<StopVerdict> {
  const judgement = await judgeCompletion(
    {
      promiseText: loop.completionPromise,
      finalMessage: lastMessage,
      prompt: loop.prompt,
      criteria: loop.completionCriteria,
      mayCheck: true,
    },
    { cwd: context.projectDir, env: agentEnvironment(context.env, {}) },
  );
  return { ...judgement, failingChecks: judgement.done ? "" : failingContext(judgement.verdicts) };
}
