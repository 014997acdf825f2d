// Whether the `ralph` a shell finds on PATH is this very ralph, so files a team shares can name it plainly.
import { accessSync, constants, realpathSync } from "node:fs";
import { delimiter, isAbsolute, join } from "node:path";

/** True when the first executable `ralph` on `PATH` resolves to `mainScript` (as an npm install links it). */
export function ralphOnPath(mainScript: string, path: string | undefined): boolean {
  let self: string;
  try {
    self = realpathSync(mainScript);
  } catch {
    return false;
  }
  for (const dir of (path ?? "").split(delimiter)) {
    if (!isAbsolute(dir)) continue;
    const candidate = join(dir, "ralph");
    try {
      accessSync(candidate, constants.X_OK);
    } catch {
      continue;
    }
    // The shell runs the first one it finds: only that one counts.
    try {
      return realpathSync(candidate) === self;
    } catch {
      return false;
    }
  }
  return false;
}
