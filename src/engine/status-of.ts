// status.json as the engine's machine implies it: the one place a live run's status is derived.
import type { AgentName } from "../agents/types.js";
import type { RunActivity, RunStatus } from "../store/status-file.js";
import type { Machine, Phase } from "./phase.js";

/** The status fields a live run's machine determines (the ending fields are written by finishRun). */
export type StatusPatch = Pick<
  RunStatus,
  | "state"
  | "agent"
  | "iteration"
  | "max_iterations"
  | "calls"
  | "cost_usd"
  | "tokens"
  | "session_id"
  | "current_task"
  | "last_action"
  | "resume_at"
  | "failures"
  | "resources"
  | "question"
  | "answer"
  | "review"
>;

/** What status.json says for the machine. */
export function statusOf(machine: Machine): StatusPatch {
  const { tally, phase } = machine;
  return {
    state: activityOf(phase),
    // A fallback agent is named while its iteration is under way; between iterations, the run's own agent.
    agent: "attempt" in phase ? phase.attempt.agent : (machine.config.agents[0] as AgentName),
    iteration: tally.iteration,
    max_iterations: machine.plan.maxIterations,
    calls: tally.calls,
    cost_usd: tally.costUsd,
    tokens: tally.tokens,
    session_id: tally.sessionId,
    current_task: tally.task,
    last_action: tally.lastAction,
    resume_at: phase.id === "waitingLimit" ? new Date(phase.resumeAtMs).toISOString() : null,
    failures: tally.failures,
    resources: tally.resources,
    question: tally.question?.text ?? null,
    answer: tally.answer,
    review: tally.review,
  };
}

function activityOf(phase: Phase): RunActivity {
  switch (phase.id) {
    case "boundary":
    case "running":
    case "judging":
    case "reviewing":
    case "verifying":
      return "running";
    case "paused":
      return "paused";
    case "waitingLimit":
      return "waiting";
    case "needsHuman":
      return "needs_human";
    case "ending":
      return "stopping";
    case "ended":
      return "ended";
    default: {
      const unreachable: never = phase;
      throw new Error(`unknown phase ${JSON.stringify(unreachable)}`);
    }
  }
}
