// `ralph status` as the built CLI's quick path runs it: bundled into one file of its own (scripts/bundle.mjs),
// so that the call reads and compiles one module instead of the command tree and a dozen chunks.
import { statusCommand } from "./commands/inspect.js";
import { findProject } from "./find-project.js";
import { sayFailure } from "./failure-exit.js";

// The one wording of failures, for the entry file to load only when something failed (see fast-start.ts).
export { sayFailure };

/** Runs `ralph status [RUN] [--json]`; resolves to its exit code, or null on a failure only the full CLI words. */
export async function quickStatus(run: string | undefined, json: boolean): Promise<number | null> {
  try {
    return await statusCommand(findProject(process.cwd()), run, json);
  } catch (error) {
    // Bad input (no such run, no runs yet, a planted file): worded as main.ts words it for every command.
    const said = sayFailure(error);
    if (!said.input) return null;
    process.stderr.write(`ralph: ${said.line}\n`);
    return said.code;
  }
}
