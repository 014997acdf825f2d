// An iteration whose sandboxed agent planted a repository (see sandbox/tamper-scan.ts): it fails, with a
// sandbox_tamper event naming what was planted, and nothing of it is committed.
import type { RunRecord } from "../run/run-record.js";
import type { AgentRun } from "./phase.js";

/** The agent run as failed for planting `paths` (already moved out of the work tree), said in the log and an event. */
export function tamperedRun(record: RunRecord, iteration: number, run: AgentRun, paths: string[]): AgentRun {
  const message = `sandbox_tamper: the agent planted what git would run or follow later, outside the sandbox: ${paths.join(", ")} (moved to ${record.paths.dir}/planted; nothing of this iteration is committed)`;
  record.log(`iteration ${iteration}: ${message}`);
  record.event({ type: "sandbox_tamper", iteration, paths });
  if (run.kind !== "finished") return run;
  return { ...run, outcome: { ...run.outcome, finalMessage: null, error: { kind: "other", message } } };
}
