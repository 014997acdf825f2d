// What `foreign` means, said the same way wherever a foreign run is shown: why ralph counts a run directory
// as foreign (it has no record of starting it), and what to do about it.
import { ledgerDir } from "./ledger-entry.js";

/** The short reason, for a table's footnote or a badge's title. */
export const FOREIGN_SHORT =
  "ralph has no record of starting it (started with another HOME or XDG_STATE_HOME, or copied here)";

/** Why a run is foreign, naming where this ralph keeps its records. */
export function foreignWhy(env: NodeJS.ProcessEnv = process.env): string {
  return `ralph has no record of starting it: it was started with another HOME or XDG_STATE_HOME (this ralph keeps its records in ${ledgerDir(env)}), or copied or made here by hand`;
}

/** What to do about a foreign run directory. */
export function foreignTodo(runDir: string): string {
  return `to see and control it, run ralph with the HOME or XDG_STATE_HOME it was started with; if it is not yours, remove ${runDir}`;
}
