// ralph's copy of the in-session loop file as ralph last wrote it, kept beside the runner's records (out of the
// project): what loop-guard.ts compares the file with at a stop.
import { createHash } from "node:crypto";
import { copyFileSync, existsSync, mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { ledgerDir } from "../control/ledger-entry.js";

/** Where the copy of the loop file ralph last wrote is kept (the runner's records, not the project). */
export function trustedLoopCopy(loopFile: string, env: NodeJS.ProcessEnv = process.env): string {
  const key = createHash("sha256").update(resolve(loopFile)).digest("hex").slice(0, 32);
  return join(ledgerDir(env), "hook-loops", `${key}.md`);
}

/** Records the loop file as it is now as ralph's own write (the rules in force). */
export function trustLoopFile(loopFile: string, env: NodeJS.ProcessEnv = process.env): void {
  const copy = trustedLoopCopy(loopFile, env);
  try {
    mkdirSync(join(copy, ".."), { recursive: true, mode: 0o700 });
    if (existsSync(loopFile)) copyFileSync(loopFile, copy);
  } catch {
    // No copy: the next stop takes the file as it finds it, as before the guard.
  }
}

