// The transitions of a question the agent asks a person: into needsHuman with the question, and out of it
// with the answer, which the next iteration's prompt carries (startIteration in step.ts).
import type { Fingerprint } from "../judge/progress-fingerprint.js";
import type { RecordEntry } from "../run/run-record.js";
import type { Input, Machine, Step, Tally } from "./phase.js";
import { betweenIterations, end, logs, stay, taskFinished, to } from "./transitions.js";

/** judging → needsHuman: the question is published and kept (status.json) until a person answers it. */
export function askPerson(
  machine: Machine,
  iteration: number,
  question: string,
  tally: Tally,
  entries: RecordEntry[],
  fingerprint: Fingerprint | null,
): Step {
  const waiting: Tally = {
    ...tally,
    question: { text: question, iteration },
    answer: null,
    ...(fingerprint?.ok ? { fingerprint } : {}),
    lastAction: `iteration ${iteration} asked a question; waiting for an answer`,
  };
  entries.push(
    { kind: "event", body: { type: "needs_human", iteration, question } },
    ...logs(`the agent asks: ${JSON.stringify(question)}; waiting for a person to answer (ralph answer)`),
  );
  // Looked at at once: a STOP, PAUSE or answer written while the agent ran is acted on now.
  return {
    machine: to(machine, { id: "needsHuman" }, { tally: waiting }),
    effects: [
      { kind: "record", entries },
      { kind: "look", what: "all" },
    ],
  };
}

/**
 * Waiting for a person: only an answer (or what ends any wait) moves on; PAUSE is seen once answered. With
 * --task, the asking iteration having marked that task done ends the run DONE, as at a boundary: an answer
 * could only reach an iteration that never starts, so nobody is kept waiting for one.
 */
export function whileNeedsHuman(machine: Machine, input: Input): Step {
  const finished = input.type === "sentinel" ? taskFinished(machine) : null;
  if (finished) {
    const dropped = machine.tally.question;
    const tally = { ...machine.tally, question: null, answer: null };
    return end(
      to(machine, machine.phase, { tally }),
      finished,
      dropped ? logs(`the question of iteration ${dropped.iteration} is left unanswered: its task is done`) : [],
    );
  }
  const common = betweenIterations(machine, input);
  if (common) return common;
  const { question } = machine.tally;
  switch (input.type) {
    case "sentinel": {
      const answer = input.answer ?? null;
      if (answer === null || !question) return stay(machine);
      const tally = { ...machine.tally, answer, lastAction: `question of iteration ${question.iteration} answered` };
      const entries: RecordEntry[] = [
        { kind: "event", body: { type: "answered", iteration: question.iteration, question: question.text, answer } },
        ...logs(`answered: ${JSON.stringify(answer)}; the next prompt carries the question and the answer`),
      ];
      return {
        machine: to(machine, { id: "boundary" }, { tally }),
        effects: [{ kind: "record", entries }, { kind: "clearAnswer" }, { kind: "look", what: "all" }],
      };
    }
    case "control":
      return { machine, effects: [{ kind: "look", what: "control" }] };
    // Waiting for a person: no agent or check is running, and time alone answers nothing. (Signals, failed writes and new plans: betweenIterations above.)
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
