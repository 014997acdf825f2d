// The processes a runner must never signal: itself, its ancestors, PID 1, kernel
// threads, and anything sharing a process group or session with one of those.
import type { ProcInfo } from "./proc-table.js";

/** Answers "may this process be signalled?" for one snapshot of the table. */
export interface ProtectedSet {
  pids: ReadonlySet<number>;
  groups: ReadonlySet<number>;
  sessions: ReadonlySet<number>;
}

/** Builds the protected set from a table snapshot, starting at `self` (the runner). */
export function protectedSet(table: Map<number, ProcInfo>, self: number = process.pid): ProtectedSet {
  const pids = new Set<number>([0, 1, 2, self]);
  const groups = new Set<number>();
  const sessions = new Set<number>();
  let pid = self;
  // Walk up through the ancestors; the bound guards against a corrupt (cyclic) table.
  for (let depth = 0; depth < 4096 && pid > 0; depth++) {
    pids.add(pid);
    const info = table.get(pid);
    if (info === undefined) break;
    groups.add(info.pgid);
    sessions.add(info.sid);
    pid = info.ppid;
  }
  return { pids, groups, sessions };
}

/** Whether a process is off limits (by pid, group or session). */
export function isProtected(set: ProtectedSet, info: ProcInfo): boolean {
  // Kernel threads are children of kthreadd (2) and cannot be signalled anyway.
  if (set.pids.has(info.pid) || info.ppid === 2) return true;
  return set.groups.has(info.pgid) || set.sessions.has(info.sid);
}
