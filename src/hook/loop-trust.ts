// ralph's copy of the in-session loop file as ralph last wrote it, kept beside the runner's records (out of the
// project): what loop-guard.ts compares the file with at a stop.
import { mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { ledgerDir } from "../control/ledger-entry.js";
import { writeFileAtomic } from "../store/atomic-write.js";
import { sha256Hex } from "../util/sha256.js";

/**
 * Where the copy of the loop file ralph last wrote is kept (the runner's records, not the project). Named by
 * the file's path as given, links unresolved: the agent can swap `.claude` for a link, which must not move
 * the name away from ralph's copy (and so turn the guard off).
 */
export function trustedLoopCopy(loopFile: string, env: NodeJS.ProcessEnv = process.env): string {
  const key = sha256Hex(resolve(loopFile)).slice(0, 32);
  return join(ledgerDir(env), "hook-loops", `${key}.md`);
}

/**
 * Records `text`, what ralph just wrote to the loop file (or accepted in it), as the rules in force. Never read
 * back from the project: a process of the agent's could replace the file between ralph's write and the copy.
 */
export function trustLoopFile(loopFile: string, text: string | Buffer, env: NodeJS.ProcessEnv = process.env): void {
  const copy = trustedLoopCopy(loopFile, env);
  try {
    mkdirSync(join(copy, ".."), { recursive: true, mode: 0o700 });
    writeFileAtomic(copy, text, 0o600, false);
  } catch {
    // No copy: the next stop takes the file as it finds it, as before the guard.
  }
}
