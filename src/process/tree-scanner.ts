// Repeated scans of one tree while it is being ended, and signals guarded against
// pid reuse and against hitting the runner's own groups and sessions.
import { findTree, identityKey, type ProcessIdentity, type TreeMarker } from "./inventory.js";
import { isAlive, prepareReads, readProcTable, type ProcInfo } from "./proc-table.js";
import { isProtected, protectedSet, type ProtectedSet } from "./protected-set.js";

/** Tracks every member of a tree across scans; each scan returns the live ones. */
export class TreeScanner {
  /** Every member ever found, by identity key. */
  readonly everFound = new Map<string, ProcessIdentity>();
  /** Identity keys that received at least one signal, and those that received SIGKILL. */
  readonly signalled = new Set<string>();
  readonly killed = new Set<string>();
  private guard: ProtectedSet | null = null;
  private rootPid: number | null;

  constructor(
    rootPid: number | null,
    private readonly marker: TreeMarker | null,
    known: ProcessIdentity[],
  ) {
    this.rootPid = rootPid;
    for (const identity of known) this.everFound.set(identityKey(identity), identity);
  }

  /** Re-reads the process table; returns the members alive now, by identity key. */
  scan(): Map<string, ProcessIdentity> {
    const table = readProcTable();
    this.guard = protectedSet(table);
    const known = [...this.everFound.values()];
    const live = new Map<string, ProcessIdentity>();
    for (const identity of findTree(this.rootPid, this.marker, known, table, this.guard)) {
      const key = identityKey(identity);
      live.set(key, identity);
      this.everFound.set(key, identity);
    }
    // The root is remembered by identity from now on: its bare pid could be reused once it is reaped.
    this.rootPid = null;
    for (const [key, identity] of this.everFound) {
      const info = table.get(identity.pid);
      if (info === undefined || info.startTime !== identity.startTime || !isAlive(info)) this.everFound.delete(key);
    }
    return live;
  }

  /**
   * Sends one signal to each given member, re-checking right before each kill that
   * the pid still belongs to the same process, is alive, and is not protected.
   * (Without pidfds a reuse in the microseconds between check and kill stays possible.)
   */
  sendAll(identities: Iterable<ProcessIdentity>, signal: NodeJS.Signals): number {
    const list = [...identities];
    const read = prepareReads(list.map((identity) => identity.pid));
    let sent = 0;
    for (const identity of list) if (this.sendChecked(identity, read(identity.pid), signal)) sent++;
    return sent;
  }

  /** sendAll for one member. */
  send(identity: ProcessIdentity, signal: NodeJS.Signals): boolean {
    return this.sendAll([identity], signal) === 1;
  }

  private sendChecked(identity: ProcessIdentity, info: ProcInfo | null, signal: NodeJS.Signals): boolean {
    if (info === null || info.startTime !== identity.startTime || !isAlive(info)) return false;
    if (this.guard === null || isProtected(this.guard, info)) return false;
    try {
      process.kill(identity.pid, signal);
    } catch {
      return false;
    }
    const key = identityKey(identity);
    this.signalled.add(key);
    if (signal === "SIGKILL") this.killed.add(key);
    return true;
  }
}
