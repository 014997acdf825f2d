// The process table through `ps`, for systems without /proc (macOS). Untested
// on this project's CI (Linux); kept small and defensive.
import { requireBuiltin } from "../util/require-builtin.js";
import type { ProcInfo } from "./proc-info.js";

// child_process is loaded on the first call, where there is no /proc: on Linux `ralph status` never pays for it.

// `ps` shows no session id, only a session pointer: sessions are numbered by that
// pointer, stable for the life of this process. Negative numbers keep them apart from pids.
const sessionIds = new Map<string, number>();

function sessionNumber(token: string): number {
  let id = sessionIds.get(token);
  if (id === undefined) {
    id = -(sessionIds.size + 1);
    sessionIds.set(token, id);
  }
  return id;
}

function ps(args: string[]): string {
  const { spawnSync } = requireBuiltin("node:child_process") as typeof import("node:child_process");
  const result = spawnSync("ps", args, {
    encoding: "utf8",
    env: { ...process.env, LC_ALL: "C" },
    maxBuffer: 64 * 1024 * 1024,
  });
  return result.stdout ?? "";
}

/** All processes (pids null) or the given ones, from one `ps` call. */
export function readPsTable(pids: number[] | null): Map<number, ProcInfo> {
  const table = new Map<number, ProcInfo>();
  if (pids !== null && pids.length === 0) return table;
  const columns = "pid=,ppid=,pgid=,sess=,stat=,lstart=,ucomm=";
  const select = pids === null ? ["-A"] : ["-p", pids.join(",")];
  for (const line of ps([...select, "-o", columns]).split("\n")) {
    // pid ppid pgid sess stat, then lstart's five words ("Mon Jan  1 12:00:00 2024"), then comm.
    const parts = line.trim().split(/\s+/);
    if (parts.length < 10) continue;
    const [pid, ppid, pgid, sess, stat] = parts;
    const info: ProcInfo = {
      pid: Number(pid),
      ppid: Number(ppid),
      pgid: Number(pgid),
      sid: sessionNumber(sess ?? ""),
      state: (stat ?? "?").charAt(0),
      startTime: parts.slice(5, 10).join(" "),
      comm: parts.slice(10).join(" "),
    };
    if (Number.isInteger(info.pid) && info.pid > 0) table.set(info.pid, info);
  }
  return table;
}

// Every process's command line and environment from one `ps -E` call, reused for
// a few milliseconds so a scan over the whole table costs one `ps`, not one per process.
const SNAPSHOT_MS = 20;
let snapshot: { at: number; lines: Map<number, string> } | null = null;

/** Whether `ps -E` shows KEY=VALUE among a process's environment (own processes only, unless root). */
export function psHasEnvEntry(pid: number, entry: string): boolean {
  if (snapshot === null || performance.now() - snapshot.at > SNAPSHOT_MS) {
    const lines = new Map<number, string>();
    for (const line of ps(["-A", "-wwE", "-o", "pid=,command="]).split("\n")) {
      const match = /^\s*(\d+)\s(.*)$/.exec(line);
      if (match) lines.set(Number(match[1]), match[2] ?? "");
    }
    snapshot = { at: performance.now(), lines };
  }
  const line = snapshot.lines.get(pid);
  if (line === undefined) return false;
  const at = line.indexOf(` ${entry}`);
  return at >= 0 && (at + entry.length + 1 === line.length || line.charAt(at + entry.length + 1) === " ");
}
