// What a run's log says at its start about how its agents are supervised (the same for a run and a child engine).
import type { Supervision } from "../process/supervision.js";

/** The supervision mode and why, `shared` appended, then each controller whose figures and cap are unavailable. */
export function supervisionNotes(supervision: Pick<Supervision, "mode" | "report">, shared = ""): string[] {
  const notes = [`supervision: ${supervision.mode} (${supervision.report.why})${shared}`];
  for (const [name, source] of Object.entries(supervision.report.controllers))
    if (source.startsWith("unavailable")) notes.push(`${name} figures and cap ${source}`);
  return notes;
}
