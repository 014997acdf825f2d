// The reviewing phase: the reviewers run on an iteration the rest would end DONE; their answers settle it.
import { settle } from "./judging.js";
import type { Input, Machine, Phase, Step } from "./phase.js";
import { interrupted, onTrustedPlan, stay, to, writeFailed } from "./transitions.js";

/** The reviewers run: their answers settle the iteration; a signal, a failed write or stop --now ends them, unjudged. */
export function whileReviewing(machine: Machine, phase: Phase & { id: "reviewing" }, input: Input): Step {
  const { attempt, run } = phase.judging;
  switch (input.type) {
    case "signal":
      return {
        machine: to(machine, { id: "ending", ending: interrupted(input), attempt, judged: run }),
        effects: [{ kind: "endTree", why: "interrupted" }],
      };
    case "recordFailed":
      return {
        machine: to(machine, { id: "ending", ending: writeFailed(input), attempt, judged: run }),
        effects: [{ kind: "endTree", why: "write_failed" }],
      };
    case "desired":
      return onTrustedPlan(machine, input);
    case "reviewed":
      return settle(machine, phase.judging, phase.checked, input.reviews);
    case "control":
      return { machine, effects: [{ kind: "look", what: "sentinels" }] };
    case "sentinel":
      if (!input.stopNow) return stay(machine);
      return {
        machine: to(machine, {
          id: "ending",
          ending: { reason: "STOPPED", detail: "stop --now ended the review" },
          attempt,
          judged: run,
        }),
        effects: [{ kind: "endTree", why: "stop_now" }],
      };
    // The agent and the checks are over; no timer runs while reviewing.
    case "tick":
    case "agentResult":
    case "agentExited":
    case "limitHit":
    case "checked":
      return stay(machine);
    default: {
      const unreachable: never = input;
      throw new Error(`unknown input ${JSON.stringify(unreachable)}`);
    }
  }
}
