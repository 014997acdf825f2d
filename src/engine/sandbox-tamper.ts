// An iteration whose sandboxed agent, or whose checks (they run the agent's code), planted a repository (see
// sandbox/tamper-scan.ts): it fails, with a sandbox_tamper event naming what was planted, and nothing of it
// is committed.
import type { CriterionVerdict } from "../judge/criteria.js";
import type { RunRecord } from "../run/run-record.js";
import { visibleLine } from "../view/visible-text.js";
import type { AgentRun } from "./phase.js";

/**
 * Says in the log and an event that `paths` (already moved out of the work tree) were planted; the message.
 * The agent named them: written out visibly, one line, so a name with a newline or an escape sequence can
 * neither forge a log line nor drive the person's terminal (the event keeps them as they are, in JSON).
 */
function reportTamper(record: RunRecord, iteration: number, paths: string[], by: string): string {
  const message = `sandbox_tamper: ${by} planted what git would run or follow later, outside the sandbox: ${paths.map(visibleLine).join(", ")} (moved to ${record.paths.dir}/planted; nothing of this iteration is committed)`;
  record.log(`iteration ${iteration}: ${message}`);
  record.event({ type: "sandbox_tamper", iteration, paths });
  return message;
}

/** The agent run as failed for planting `paths`. */
export function tamperedRun(record: RunRecord, iteration: number, run: AgentRun, paths: string[]): AgentRun {
  const message = reportTamper(record, iteration, paths, "the agent");
  if (run.kind !== "finished") return run;
  return { ...run, outcome: { ...run.outcome, finalMessage: null, error: { kind: "other", message } } };
}

/** The checks' verdicts, every one failed, for the checks having planted `paths`. */
export function tamperedChecks(
  record: RunRecord,
  iteration: number,
  verdicts: CriterionVerdict[],
  paths: string[],
): CriterionVerdict[] {
  const message = reportTamper(record, iteration, paths, "the checks (the agent's code)");
  return verdicts.map((verdict) => ({ ...verdict, passed: false, detail: `${message}; ${verdict.detail}` }));
}
