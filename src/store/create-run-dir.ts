// Creates a run directory all at once, so a runner killed at any moment leaves it either absent or continuable.
import { mkdirSync, readdirSync, renameSync, rmSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import { writeFileAtomic } from "./atomic-write.js";
import { runsDir } from "./run-paths.js";

/** Prefix of a run directory being built; such names are never run ids (those cannot start with a dot). */
const BUILDING = ".new-";

/** Why a run directory could not be created. */
export class RunDirExists extends Error {
  override readonly name = "RunDirExists";
}

/**
 * Writes `files` (name → content) into a hidden directory beside the runs, then renames it to the run's id in
 * one step. Before the rename a crash leaves only a hidden directory (removed by the next start); after
 * it the run has its state.md, status.json and settings.json, so `ralph continue` can take it up.
 */
export function createRunDir(projectDir: string, runId: string, files: Record<string, string | Buffer>): void {
  const runs = runsDir(projectDir);
  removeAbandoned(runs);
  const building = join(runs, `${BUILDING}${process.pid}-${runId}`);
  rmSync(building, { recursive: true, force: true });
  mkdirSync(building, { mode: 0o700 });
  try {
    for (const [name, text] of Object.entries(files)) writeFileAtomic(join(building, name), text);
    renameSync(building, join(runs, runId));
  } catch (error) {
    rmSync(building, { recursive: true, force: true });
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOTEMPTY" || code === "EEXIST") throw new RunDirExists(runId);
    throw error;
  }
}

/** Removes half-built run directories whose builder is gone. */
function removeAbandoned(runs: string): void {
  let names: string[];
  try {
    names = readdirSync(runs);
  } catch {
    return;
  }
  for (const name of names) {
    const pid = Number(/^\.new-(\d+)-/.exec(name)?.[1]);
    if (!Number.isSafeInteger(pid) || pid <= 0 || processExists(pid)) continue;
    rmSync(join(runs, name), { recursive: true, force: true });
  }
}

function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Removes the temporary files an interrupted atomic write left in a run directory (`*.tmp`). */
export function removeLeftoverTemps(dir: string): void {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names.filter((n) => n.endsWith(".tmp"))) {
    try {
      unlinkSync(join(dir, name));
    } catch {
      // Gone already, or not ours to remove.
    }
  }
}
