// NO_WORK is earned: with every task marked done, the checks that gate tasks must pass on the tree first.
// A failing check sends the run on, with the output in the next prompt, instead of ending it.
import { failingContext } from "../judge/criteria.js";
import type { Ending } from "../run/finish-run.js";
import { verdictEntries } from "../run/iteration-record.js";
import type { Input, Machine, Phase, Step } from "./phase.js";
import { gatesOf } from "./task-gate.js";
import { end, goOn, interrupted, logs, onTrustedPlan, stay, to, writeFailed } from "./transitions.js";

/** No task is left: NO_WORK when no check gates tasks or they passed on this tree; else run them first. */
export function noWorkLeft(machine: Machine): Step {
  const file = machine.plan.tasks ?? "the task list";
  const gates = gatesOf(machine.plan.completionCriteria);
  if (gates.length === 0 || machine.tally.gatesOk === true || machine.config.dryRun)
    return end(machine, { reason: "NO_WORK", detail: `every task in ${file} is done` });
  const tally = { ...machine.tally, lastAction: `every task in ${file} is marked done: running the checks` };
  return {
    machine: to(machine, { id: "verifying", ending: null }, { tally }),
    effects: [
      {
        kind: "record",
        entries: logs(`every task in ${file} is marked done; the checks run before the run ends NO_WORK`),
      },
      { kind: "runChecks", iteration: machine.tally.iteration, criteria: gates, fingerprint: false },
    ],
  };
}

/** While the checks run: their verdict decides; a signal, a failed write or stop --now ends the run once they are stopped. */
export function whileVerifying(machine: Machine, phase: Phase & { id: "verifying" }, input: Input): Step {
  const stopping = (ending: Ending): Step =>
    phase.ending
      ? stay(machine)
      : { machine: to(machine, { id: "verifying", ending }), effects: [{ kind: "endTree", why: "interrupted" }] };
  switch (input.type) {
    case "signal":
      return stopping(interrupted(input));
    case "recordFailed":
      return stopping(writeFailed(input));
    case "sentinel":
      return input.stopNow ? stopping({ reason: "STOPPED", detail: "stop --now ended the checks" }) : stay(machine);
    case "control":
      return { machine, effects: [{ kind: "look", what: "sentinels" }] };
    case "desired":
      return onTrustedPlan(machine, input);
    case "checked": {
      if (phase.ending) return end(machine, phase.ending);
      const file = machine.plan.tasks ?? "the task list";
      const checked = verdictEntries(machine.tally.iteration, input.verdicts);
      if (input.verdicts.every((verdict) => verdict.passed)) {
        return end(
          to(machine, phase, { tally: { ...machine.tally, gatesOk: true } }),
          { reason: "NO_WORK", detail: `every task in ${file} is done and the checks pass` },
          checked,
        );
      }
      const failingChecks = `Every task in ${file} is marked done, but the checks fail on this tree. Make them pass.\n\n${failingContext(input.verdicts)}`;
      const tally = {
        ...machine.tally,
        gatesOk: false,
        failingChecks,
        lastAction: "the checks fail with every task marked done",
      };
      return goOn(to(machine, phase, { tally }), [
        ...checked,
        ...logs(
          `every task in ${file} is marked done, but a check fails: the run goes on, with the check output in the next prompt`,
        ),
      ]);
    }
    default:
      return stay(machine);
  }
}
