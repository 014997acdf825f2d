// The guards that make an unattended run safe to leave: the same failure over and over ends it, and each guard
// that fires says so in one line and one event.
import type { CriterionVerdict } from "../judge/criteria.js";
import type { Ending } from "../run/finish-run.js";
import type { RecordEntry } from "../run/run-record.js";
import type { Machine, Repeat, Step } from "./phase.js";
import { end } from "./transitions.js";
import { clip } from "../util/clip.js";
import { limitEnding } from "../control/limit-rules.js";

/** The guards that can end a run. */
export type GuardName = "stalled" | "same_failure" | "billing";

/**
 * The failure of an iteration, in words: the agent's error (with the first error line of its stderr), else the
 * failing checks with the first error line of their output; null when none.
 */
export function failureKey(
  failure: string | null,
  verdicts: readonly CriterionVerdict[],
  stderr = "",
): { key: string; what: string } | null {
  if (failure) {
    const said = errorLine(stderr);
    return {
      key: `agent\0${failure}`,
      what: `the agent failed: ${failure}${said !== "" && !failure.includes(said) ? ` (${clip(said, 120)})` : ""}`,
    };
  }
  const failed = verdicts.filter((verdict) => !verdict.passed && verdict.skipped !== true);
  if (failed.length === 0) return null;
  const key = failed
    .map((verdict) => `${verdict.type}\0${verdict.check}\0${verdict.detail}\0${verdict.outputTail}`)
    .join("\0\0");
  const what = failed
    .map(
      (verdict) =>
        `check ${verdict.type === "command" ? "" : `${verdict.type} `}\`${verdict.check}\` ${verdict.detail}${inBrackets(errorLine(verdict.outputTail))}`,
    )
    .join("; ");
  return { key: `checks\0${key}`, what };
}

/** The repeat count after an iteration whose failure is `now` (null: it did not fail). */
export function nextRepeat(before: Repeat | null, now: { key: string; what: string } | null): Repeat | null {
  if (!now) return null;
  return before?.key === now.key ? { ...before, count: before.count + 1 } : { ...now, count: 1 };
}

/**
 * The run ends by guard `guard`: its one-line explanation is logged and published before the ending. A guard
 * ends a run only when it cuts it short: when this iteration was the last the cap allows, the run ends
 * MAX_ITERATIONS as it would have anyway, its detail saying what the guard saw (`seen`).
 */
export function guardEnd(
  machine: Machine,
  guard: GuardName,
  ending: Ending,
  entries: RecordEntry[],
  why: string,
  seen: string | null = null,
): Step {
  const cap = seen === null ? null : capReached(machine);
  if (cap) return end(machine, { reason: "MAX_ITERATIONS", detail: `${cap.detail}; ${seen}` }, entries);
  entries.push(
    { kind: "log", line: `guard ${guard}: ${why}` },
    { kind: "event", body: { type: "guard_fired", guard, detail: ending.detail } },
  );
  return end(machine, ending, entries);
}

/** The cap's ending when the iteration just judged was the last one max_iterations allows, else null. */
function capReached(machine: Machine): Ending | null {
  const ending = limitEnding(
    { maxIterations: machine.plan.maxIterations, maxRuntimeMs: null, maxCostUsd: null },
    { iterations: machine.tally.iteration, elapsedMs: 0, costUsd: 0 },
  );
  return ending?.reason === "MAX_ITERATIONS" ? ending : null;
}

function inBrackets(line: string): string {
  return line === "" ? "" : ` (${clip(line, 120)})`;
}

/** A line that says what went wrong: `Error: boom`, `error[E0308]: …`, `FAIL src/a.test.ts`, `not ok 3 - …`, `✖ …`. */
const ERROR_START =
  /^(?:[\w.$]*(?:Error|Exception)\b|(?:[Ee]rror|ERROR|[Ff]atal|FATAL|panic|FAIL(?:ED)?|[Ff]ailed|[Ff]ailure)\b|not ok\b|npm ERR!|[✖✗×]|E\s)/;
/** A line that mentions a failure somewhere. */
const ERROR_WORD = /\b(?:error|errors|failed|failure|fatal|exception|cannot|can't|not found|no such)\b/i;

/**
 * The line of `output` naming what went wrong: the first line that starts as an error does, else the first one
 * that mentions one, else the last line. Not the last line first: after a crash that is the runtime's version
 * (`Node.js v20.20.2`), the same for every failure.
 */
export function errorLine(output: string): string {
  const lines = output
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== "");
  return (
    lines.find((line) => ERROR_START.test(line)) ?? lines.find((line) => ERROR_WORD.test(line)) ?? lines.at(-1) ?? ""
  );
}
