// Finding an agent's process tree, and remembering its members while it runs so
// that processes which reparented to PID 1 after their parent died are still found.
import { isAlive, readEnvMarker, readProcTable, type ProcInfo } from "./proc-table.js";
import { isProtected, protectedSet, type ProtectedSet } from "./protected-set.js";

/** A process's identity: a pid alone can be reused, (pid, startTime) cannot. */
export interface ProcessIdentity {
  pid: number;
  startTime: string;
}

/** A per-run environment variable every agent process inherits, e.g. RALPH_SUPERVISOR=<token>. */
export interface TreeMarker {
  key: string;
  value: string;
}

/** The identity key used in maps and sets. */
export function identityKey(identity: ProcessIdentity): string {
  return `${identity.pid}:${identity.startTime}`;
}

// Environments read once and found without a marker are not read again while
// the same process runs the same program: a process only gets a new environment
// by exec'ing, which changes comm (part of the key) in the case that matters: a
// child read between fork and exec. An outsider has no reason to exec with our
// marker. This keeps repeated scans cheap (environment files are the
// bulk of a scan's cost).
const markerMisses = new Map<string, Set<string>>();

function rememberMiss(key: string, entry: string): void {
  const entries = markerMisses.get(key);
  if (entries === undefined) markerMisses.set(key, new Set([entry]));
  else entries.add(entry);
}

function missKey(info: ProcInfo): string {
  return `${info.pid}:${info.startTime}:${info.comm}`;
}

function pruneMisses(table: Map<number, ProcInfo>): void {
  for (const key of markerMisses.keys()) {
    const info = table.get(Number(key.slice(0, key.indexOf(":"))));
    if (info === undefined || missKey(info) !== key) markerMisses.delete(key);
  }
}

/**
 * Live members of a tree: descendants (by parentage) of the root, of every known
 * identity still alive with the same start time, and of every process carrying
 * the marker. Protected processes (see protected-set.ts) are never members.
 */
export function findTree(
  rootPid: number | null,
  marker: TreeMarker | null,
  known: ProcessIdentity[],
  table: Map<number, ProcInfo> = readProcTable(),
  guard: ProtectedSet = protectedSet(table),
): ProcessIdentity[] {
  const children = new Map<number, number[]>();
  for (const info of table.values()) {
    const siblings = children.get(info.ppid);
    if (siblings === undefined) children.set(info.ppid, [info.pid]);
    else siblings.push(info.pid);
  }
  const members = new Map<number, ProcInfo>();
  const queue: ProcInfo[] = [];
  const add = (info: ProcInfo | undefined): void => {
    if (info === undefined || members.has(info.pid) || !isAlive(info) || isProtected(guard, info)) return;
    members.set(info.pid, info);
    queue.push(info);
  };
  const addDescendants = (): void => {
    while (queue.length > 0) {
      const parent = queue.pop() as ProcInfo;
      for (const pid of children.get(parent.pid) ?? []) add(table.get(pid));
    }
  };
  if (rootPid !== null) add(table.get(rootPid));
  for (const identity of known) {
    const info = table.get(identity.pid);
    if (info !== undefined && info.startTime === identity.startTime) add(info);
  }
  // Parentage first: members found that way need no environment read.
  addDescendants();
  if (marker !== null) {
    const entry = `${marker.key}=${marker.value}`;
    pruneMisses(table);
    for (const info of table.values()) {
      if (members.has(info.pid) || !isAlive(info) || isProtected(guard, info)) continue;
      const key = missKey(info);
      if (markerMisses.get(key)?.has(entry)) continue;
      const state = readEnvMarker(info.pid, marker.key, marker.value);
      if (state === "yes") add(info);
      else if (state === "no") rememberMiss(key, entry);
    }
  }
  addDescendants();
  return [...members.values()].map(({ pid, startTime }) => ({ pid, startTime }));
}

/** Remembers every identity seen in one agent's tree while it runs. */
export class ProcessInventory {
  private readonly seen = new Map<string, ProcessIdentity>();
  private timer: NodeJS.Timeout | null = null;
  private rootStart: string | null = null;

  constructor(
    private readonly rootPid: number,
    private readonly marker: TreeMarker | null,
  ) {}

  /** Takes one snapshot: adds new members, forgets identities that are gone. */
  sample(): void {
    const table = readProcTable();
    for (const [key, identity] of this.seen) {
      const info = table.get(identity.pid);
      if (info === undefined || info.startTime !== identity.startTime || !isAlive(info)) this.seen.delete(key);
    }
    // Once the root is gone its pid may be reused: follow it only under its first start time.
    const root = table.get(this.rootPid);
    if (root !== undefined && this.rootStart === null) this.rootStart = root.startTime;
    const followRoot = root !== undefined && root.startTime === this.rootStart;
    for (const identity of findTree(followRoot ? this.rootPid : null, this.marker, [...this.seen.values()], table)) {
      this.seen.set(identityKey(identity), identity);
    }
  }

  /** Samples every intervalMs until stopSampling(); never keeps the process alive. */
  startSampling(intervalMs: number): void {
    this.stopSampling();
    this.timer = setInterval(() => this.sample(), intervalMs);
    this.timer.unref();
  }

  /** Stops the periodic sampling started by startSampling(). */
  stopSampling(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }

  /** The identities remembered so far (alive at the last sample). */
  identities(): ProcessIdentity[] {
    return [...this.seen.values()];
  }
}
