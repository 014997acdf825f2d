// `ralph status` and `ralph list` as the built CLI's quick path runs them: bundled into one file of their own
// (scripts/bundle.mjs), so that the call reads and compiles one module instead of the command tree and a
// dozen chunks.
import { listCommand, statusCommand } from "./commands/inspect.js";
import { findProject } from "./find-project.js";
import { sayFailure } from "./failure-exit.js";

// The one wording of failures, for the entry file to load only when something failed (see fast-start.ts).
export { sayFailure };

/** Runs `ralph status [RUN] [--json]`; resolves to its exit code, or null on a failure only the full CLI words. */
export function quickStatus(run: string | undefined, json: boolean): Promise<number | null> {
  return quickly(() => statusCommand(findProject(process.cwd()), run, json));
}

/** Runs `ralph list [--active] [--json]`; resolves to its exit code, or null on a failure only the full CLI words. */
export function quickList(active: boolean, json: boolean): Promise<number | null> {
  return quickly(() => listCommand(findProject(process.cwd()), active, json));
}

async function quickly(command: () => Promise<number>): Promise<number | null> {
  try {
    return await command();
  } catch (error) {
    // Bad input (no such run, no runs yet, a planted file): worded as main.ts words it for every command.
    const said = sayFailure(error);
    if (!said.input) return null;
    process.stderr.write(`ralph: ${said.line}\n`);
    return said.code;
  }
}
