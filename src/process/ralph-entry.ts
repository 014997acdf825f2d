// The files that start this ralph's CLI: its entry, main.cjs, and main.js, which runs it (where links and Stop
// hook entries made before the entry was CommonJS still point).
import { realpathSync } from "node:fs";
import { fileURLToPath } from "node:url";

/** The CLI's entry: what ralph starts for commands of its own (child runs, the dashboard's actions, hooks). */
export const RALPH_MAIN = fileURLToPath(new URL("../cli/main.cjs", import.meta.url));

const ENTRIES = [RALPH_MAIN, fileURLToPath(new URL("../cli/main.js", import.meta.url))];

function realPath(path: string): string | null {
  try {
    return realpathSync(path);
  } catch {
    return null;
  }
}

/** Whether `path`, links resolved, is one of this ralph's entries. */
export function isRalphEntry(path: string): boolean {
  const real = realPath(path);
  return real !== null && ENTRIES.some((entry) => realPath(entry) === real);
}
