// Whether the runner recorded in a lock or status file is still the same live process.
import { requireBuiltin } from "../util/require-builtin.js";
import { isAlive, readProcess } from "../process/proc-table.js";

/** True when `pid` runs on this host with the recorded start time (so a reused pid does not count). */
export function isRunnerAlive(holder: { pid: number; pid_start: string | null; hostname: string }): boolean {
  if (holder.hostname !== (requireBuiltin("node:os") as typeof import("node:os")).hostname()) return true; // cannot tell from here: assume alive, never steal
  const info = readProcess(holder.pid);
  if (!isAlive(info)) return false;
  return holder.pid_start === null || info?.startTime === holder.pid_start;
}
