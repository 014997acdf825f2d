// Exclusive locks held by a live runner: one per run, and one per project for runs without --name.
import { linkSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { readRegular } from "../store/regular-file.js";

/** Who holds a lock. */
export interface LockHolder {
  pid: number;
  pid_start: string | null;
  hostname: string;
  run_id: string;
  acquired_at: string;
}

/** Tells whether the process that wrote a lock (or a status) is still running. */
export type RunnerAlive = (holder: { pid: number; pid_start: string | null; hostname: string }) => boolean;

/** The outcome of trying to take a lock. */
export type LockResult =
  { ok: true; release: () => void; tookOverFrom: LockHolder | null } | { ok: false; holder: LockHolder | null };

function readHolder(file: string): LockHolder | null {
  try {
    const value = JSON.parse(readRegular(file, 64 * 1024).toString("utf8")) as LockHolder;
    return typeof value.pid === "number" ? value : null;
  } catch {
    return null;
  }
}

/**
 * Creates the lock with its content in one step: the holder is written to a temporary file that is then
 * hard-linked to the lock's name (which fails if the lock exists). A runner killed at any moment leaves
 * no lock, or a lock naming it, never an empty lock that would look held forever.
 */
function create(file: string, holder: LockHolder): boolean {
  const temporary = `${file}.${process.pid}.${Date.now().toString(36)}.tmp`;
  try {
    writeFileSync(temporary, `${JSON.stringify(holder)}\n`, { flag: "wx", mode: 0o600 });
    linkSync(temporary, file);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw error;
  } finally {
    rmSync(temporary, { force: true });
  }
}

/** Takes the lock at `file`; a lock left by a dead runner is taken over (and reported). */
export function acquireLock(file: string, holder: LockHolder, alive: RunnerAlive): LockResult {
  let tookOverFrom: LockHolder | null = null;
  for (let attempt = 0; attempt < 3; attempt++) {
    if (create(file, holder)) {
      const release = () => {
        const current = readHolder(file);
        if (current && current.pid === holder.pid && current.pid_start === holder.pid_start) {
          try {
            unlinkSync(file);
          } catch {
            // Already gone: nothing to release.
          }
        }
      };
      return { ok: true, release, tookOverFrom };
    }
    const existing = readHolder(file);
    // An unreadable lock may be one being written this instant: treat it as held.
    if (existing === null || alive(existing)) return { ok: false, holder: existing };
    tookOverFrom = existing;
    // Another runner may have taken the stale lock over in the meantime: remove only the dead holder's.
    // (Without an atomic compare-and-delete a window of microseconds remains.)
    const again = readHolder(file);
    if (again && (again.pid !== existing.pid || again.acquired_at !== existing.acquired_at)) continue;
    try {
      unlinkSync(file);
    } catch {
      // Someone else removed it first; try again.
    }
  }
  return { ok: false, holder: readHolder(file) };
}
