// Serialises everything that reads and rewrites the loop's state file (hook calls, cancel), so that two
// sessions stopping at once cannot both bind an unbound loop, and a cancel is not lost under a hook's write.
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { readProcess } from "../process/proc-table.js";
import { isRunnerAlive } from "../control/runner-alive.js";
import { acquireLock, type LockHolder } from "../control/lock-file.js";
import type { HookClock } from "./hook-run.js";

/** The lock was taken and `fn` ran, or someone else held it for the whole wait. */
export type LockedResult<T> = { ok: true; value: T } | { ok: false; holder: LockHolder | null };

/** Runs `fn` holding the lock at `file`, waiting up to `waitMs` for another holder; a dead holder's lock is taken over. */
export async function withLoopLock<T>(
  file: string,
  clock: HookClock,
  waitMs: number,
  fn: () => Promise<T>,
): Promise<LockedResult<T>> {
  mkdirSync(dirname(file), { recursive: true, mode: 0o755 });
  const holder: LockHolder = {
    pid: clock.pid,
    pid_start: readProcess(clock.pid)?.startTime ?? null,
    hostname: clock.hostname,
    run_id: "in-session-loop",
    acquired_at: clock.now().toISOString(),
  };
  const deadline = Date.now() + waitMs;
  for (;;) {
    const lock = acquireLock(file, holder, isRunnerAlive);
    if (lock.ok) {
      try {
        return { ok: true, value: await fn() };
      } finally {
        lock.release();
      }
    }
    if (Date.now() >= deadline) return { ok: false, holder: lock.holder };
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
