// Reading the system process table: /proc on Linux, `ps` elsewhere (macOS).
import { closeSync, existsSync, openSync, readdirSync, readSync } from "node:fs";
import { psHasEnvEntry, readPsTable } from "./ps-table.js";
import type { ProcInfo } from "./proc-info.js";

export type { ProcInfo } from "./proc-info.js";

const hasProc = process.platform === "linux" && existsSync("/proc/self/stat");

/** Parses one /proc/PID/stat line; null when it is not one. */
export function parseStat(text: string): ProcInfo | null {
  // comm may hold spaces and parentheses: it ends at the LAST ')'.
  const open = text.indexOf("(");
  const close = text.lastIndexOf(")");
  if (open < 0 || close < open) return null;
  const fields = text.slice(close + 2).split(" ");
  // fields[0] is field 3 (state) of proc(5); starttime is field 22.
  const pid = Number(text.slice(0, open).trim());
  const ppid = Number(fields[1]);
  const pgid = Number(fields[2]);
  const sid = Number(fields[3]);
  const startTime = fields[19];
  if (!Number.isInteger(pid) || !Number.isInteger(ppid) || startTime === undefined) return null;
  const info: ProcInfo = {
    pid,
    ppid,
    pgid,
    sid,
    state: fields[0] ?? "?",
    startTime,
    comm: text.slice(open + 1, close),
  };
  // Field 52, exit_code: only a zombie's says how it ended.
  const exitStatus = Number(fields[49]);
  if (info.state === "Z" && fields[49] !== undefined && Number.isInteger(exitStatus)) info.exitStatus = exitStatus;
  // Field 9, flags: PF_EXITING (0x4). Field 31, pending signals: SIGKILL's bit. A process killed while it waits
  // for the CPU, or held frozen, reads "R", "S" or "D" until it has run its exit.
  if ((Number(fields[6]) & 0x4) !== 0 || (Number(fields[28]) & 0x100) !== 0) info.dying = true;
  return info;
}

// One buffer reused for every /proc read: readFileSync costs ~5x more per file
// on procfs (it stats, then reads in growing chunks), which matters when the
// whole table is re-read every few tens of milliseconds.
let scratch = Buffer.alloc(64 * 1024);

/** The whole content of a /proc file, or null when it cannot be read. Valid until the next call. */
function readProcFile(path: string): Buffer | null {
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch {
    return null;
  }
  try {
    let length = 0;
    for (;;) {
      if (length === scratch.length) {
        const larger = Buffer.alloc(scratch.length * 2);
        scratch.copy(larger);
        scratch = larger;
      }
      const read = readSync(fd, scratch, length, scratch.length - length, null);
      if (read === 0) break;
      length += read;
    }
    return scratch.subarray(0, length);
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}

function readStat(pid: number): ProcInfo | null {
  const content = readProcFile(`/proc/${pid}/stat`);
  return content === null ? null : parseStat(content.toString("latin1"));
}

/** Every process on the system, by pid (a synchronous snapshot). */
export function readProcTable(): Map<number, ProcInfo> {
  if (!hasProc) return readPsTable(null);
  const table = new Map<number, ProcInfo>();
  for (const name of readdirSync("/proc")) {
    const code = name.charCodeAt(0);
    if (code < 48 || code > 57) continue;
    const info = readStat(Number(name));
    if (info !== null) table.set(info.pid, info);
  }
  return table;
}

/** One process, or null when it is gone. Zombies are returned with state "Z". */
export function readProcess(pid: number): ProcInfo | null {
  if (!Number.isInteger(pid) || pid <= 0) return null;
  if (!hasProc) return readPsTable([pid]).get(pid) ?? null;
  return readStat(pid);
}

/**
 * A reader for re-checking processes right before signalling them: on Linux each
 * call reads /proc at that moment; with `ps` one call covers all `pids` up front
 * (one `ps` per process would be far too slow).
 */
export function prepareReads(pids: number[]): (pid: number) => ProcInfo | null {
  if (hasProc) return readProcess;
  const table = readPsTable(pids);
  return (pid) => table.get(pid) ?? null;
}

/** Whether a process is running: zombies (and dead "X" entries) count as dead. */
export function isAlive(info: ProcInfo | null): boolean {
  return info !== null && info.state !== "Z" && info.state !== "X";
}

/** Whether a process's environment holds KEY=VALUE (false when it cannot be read). */
export function hasEnvMarker(pid: number, key: string, value: string): boolean {
  return readEnvMarker(pid, key, value) === "yes";
}

/** Like hasEnvMarker, but "unknown" when the environment could not be read or was empty (zombie, exiting, no permission). */
export function readEnvMarker(pid: number, key: string, value: string): "yes" | "no" | "unknown" {
  const entry = `${key}=${value}`;
  // `ps` may truncate or hide an environment: never report a definite "no" from it.
  if (!hasProc) return psHasEnvEntry(pid, entry) ? "yes" : "unknown";
  const environ = readProcFile(`/proc/${pid}/environ`);
  if (environ === null || environ.length === 0) return "unknown";
  // Entries are NUL-terminated: match a whole entry, not a prefix of a longer value.
  const needle = Buffer.from(`${entry}\0`, "latin1");
  let at = environ.indexOf(needle);
  while (at >= 0) {
    if (at === 0 || environ[at - 1] === 0) return "yes";
    at = environ.indexOf(needle, at + 1);
  }
  // The last entry may lack its terminating NUL.
  const tail = Buffer.from(entry, "latin1");
  const end = environ.length - tail.length;
  const last = end >= 0 && (end === 0 || environ[end - 1] === 0) && environ.subarray(end).equals(tail);
  return last ? "yes" : "no";
}
