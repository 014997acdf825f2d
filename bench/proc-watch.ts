// Watching processes from /proc, independently of src/process: identities, "all gone", survivors, peak memory.
import { readdirSync, readFileSync } from "node:fs";
import { nowMs, sleep } from "./stats.js";

/** A process's identity: its pid and its start time (a reused pid has another start time). */
export interface Identity {
  pid: number;
  start: string;
}

interface Stat {
  pid: number;
  ppid: number;
  state: string;
  start: string;
}

function readStat(pid: number): Stat | null {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, "latin1");
  } catch {
    return null;
  }
  // The command name may hold spaces and parentheses: the fields start after the last ')'.
  const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
  return { pid, ppid: Number(fields[1]), state: fields[0] ?? "?", start: fields[19] ?? "" };
}

/** The identity of a running process, or null when it is gone or a zombie. */
export function identify(pid: number): Identity | null {
  const stat = readStat(pid);
  return stat && stat.state !== "Z" && stat.state !== "X" ? { pid, start: stat.start } : null;
}

/** The command name of a process (e.g. "sleep"), or null when it is gone. */
export function commOf(pid: number): string | null {
  try {
    return readFileSync(`/proc/${pid}/comm`, "latin1").trimEnd();
  } catch {
    return null;
  }
}

/** Whether the process with this identity still runs (zombies count as gone). */
export function isLive(identity: Identity): boolean {
  const stat = readStat(identity.pid);
  return stat !== null && stat.start === identity.start && stat.state !== "Z" && stat.state !== "X";
}

/** Every process on the system (one synchronous /proc snapshot). */
export function snapshot(): Stat[] {
  const stats: Stat[] = [];
  for (const name of readdirSync("/proc")) {
    const code = name.charCodeAt(0);
    if (code < 48 || code > 57) continue;
    const stat = readStat(Number(name));
    if (stat) stats.push(stat);
  }
  return stats;
}

/** The live descendants of `root` (not `root` itself) in a snapshot, by parentage. */
export function descendants(root: number, table: Stat[] = snapshot()): Identity[] {
  const children = new Map<number, Stat[]>();
  for (const stat of table) {
    const list = children.get(stat.ppid);
    if (list) list.push(stat);
    else children.set(stat.ppid, [stat]);
  }
  const found: Identity[] = [];
  const queue = [root];
  while (queue.length > 0) {
    for (const child of children.get(queue.pop() as number) ?? []) {
      if (child.state === "Z" || child.state === "X") continue;
      found.push({ pid: child.pid, start: child.start });
      queue.push(child.pid);
    }
  }
  return found;
}

/**
 * Resolves with the time (nowMs) at which every identity was seen gone, or null after `timeoutMs`.
 * Checks one process per poll until it is gone, then moves on: a dead identity never comes back,
 * so each poll costs one /proc read and the watcher barely competes with what it watches.
 */
export async function waitAllGone(identities: Identity[], timeoutMs: number, pollMs = 1): Promise<number | null> {
  const deadline = nowMs() + timeoutMs;
  let next = 0;
  for (;;) {
    while (next < identities.length && !isLive(identities[next] as Identity)) next++;
    if (next >= identities.length) return nowMs();
    if (nowMs() > deadline) return null;
    await sleep(pollMs);
  }
}

/** The identities that still run. */
export function stillLive(identities: Identity[]): Identity[] {
  return identities.filter(isLive);
}

/** Live processes whose environment holds KEY=VALUE. */
export function liveCarriers(key: string, value: string): Identity[] {
  const entry = `${key}=${value}`;
  const found: Identity[] = [];
  for (const stat of snapshot()) {
    if (stat.state === "Z" || stat.state === "X") continue;
    let environ: string;
    try {
      environ = readFileSync(`/proc/${stat.pid}/environ`, "latin1");
    } catch {
      continue;
    }
    if (environ.split("\0").includes(entry)) found.push({ pid: stat.pid, start: stat.start });
  }
  return found;
}

/** SIGKILLs each identity that still runs (re-checked right before the signal). */
export function killAll(identities: Identity[]): void {
  for (const identity of identities) {
    if (!isLive(identity)) continue;
    try {
      process.kill(identity.pid, "SIGKILL");
    } catch {
      // gone meanwhile
    }
  }
}

/** A field of /proc/PID/status in kB (e.g. VmHWM, VmRSS), or null when unreadable. */
export function statusKb(pid: number, field: string): number | null {
  try {
    const match = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(readFileSync(`/proc/${pid}/status`, "latin1"));
    return match ? Number(match[1]) : null;
  } catch {
    return null;
  }
}
