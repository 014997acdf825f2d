// Whether the `ralph` a shell finds on PATH is this very ralph, so files a team shares can name it plainly.
import { accessSync, constants } from "node:fs";
import { delimiter, isAbsolute, join } from "node:path";
import { isRalphEntry } from "../process/ralph-entry.js";

/** True when the first executable `ralph` on `PATH` resolves to this ralph's entry (as an npm install links it). */
export function ralphOnPath(path: string | undefined): boolean {
  for (const dir of (path ?? "").split(delimiter)) {
    if (!isAbsolute(dir)) continue;
    const candidate = join(dir, "ralph");
    try {
      accessSync(candidate, constants.X_OK);
    } catch {
      continue;
    }
    // The shell runs the first one it finds: only that one counts.
    return isRalphEntry(candidate);
  }
  return false;
}
