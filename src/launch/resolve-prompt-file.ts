// Where a `--parallel` parent leaves a resolve run its prompt.
import { join } from "node:path";
import { runPaths } from "../store/run-paths.js";

/** The file a resolve run reads its prompt from: in the parent's run directory, written just before it starts. */
export function resolvePromptFile(projectDir: string, parentId: string, resolveId: string): string {
  return join(runPaths(projectDir, parentId).dir, `${resolveId}.prompt.md`);
}
