// Ending a whole process tree: enumerate first, polite signals, a grace period
// with re-scans, then freeze and SIGKILL whatever is left until nothing is.
import type { ProcessIdentity, TreeMarker } from "./inventory.js";
import { isAlive, readProcess, type ProcInfo } from "./proc-table.js";
import { TreeScanner } from "./tree-scanner.js";
import { pause } from "../util/pause.js";

/** How to end a tree. */
export interface EndTreeOptions {
  /** Time between the first polite signal and SIGKILL. */
  graceMs: number;
  /** Sent in order, e.g. ["SIGINT", "SIGTERM"]; SIGCONT follows the last so stopped processes act on it. */
  politeSignals: NodeJS.Signals[];
  /** Pause between two polite signals, counted inside graceMs. */
  politeGapMs?: number;
  /** Aborted → SIGKILL everything left at once (a second Ctrl-C). */
  skipGrace?: AbortSignal;
  /** Re-scan interval during the first second of the grace period (default 25 ms; 4x that afterwards). */
  pollMs?: number;
  /** Upper bound on the SIGKILL phase (default 1000 ms); whatever is still alive then is a survivor. */
  killWaitMs?: number;
  /** Aborted when the tree may just have emptied (its subreaper left): re-scan at once instead of at the next poll. */
  wake?: AbortSignal;
}

/** What endTree did. */
export interface EndTreeReport {
  /** Members found before anything was signalled. */
  found: number;
  /** Members found later (forked during the grace period). */
  lateFound: number;
  /** Distinct processes that received at least one signal. */
  signalled: number;
  /** Distinct processes that received SIGKILL. */
  killed: number;
  /** Members still alive at the end (zombies count as dead). */
  survivors: number;
  durationMs: number;
}

const FREEZE_ROUNDS = 8;

/** Whether a process is still alive as the same identity. */
export function isSame(identity: ProcessIdentity, info: ProcInfo | null): boolean {
  return isAlive(info) && info?.startTime === identity.startTime;
}

/**
 * Ends every process of a tree: descendants of the root, known identities still
 * alive, marker carriers, and their descendants. Processes sharing a group or
 * session with the runner or its ancestors are never signalled, so a tree must
 * run in its own session (spawnAgent does that). Concurrent calls are safe: the
 * freeze-and-kill step runs without yielding. Rejects only if the process table
 * cannot be listed at all.
 */
export async function endTree(
  rootPid: number | null,
  marker: TreeMarker | null,
  known: ProcessIdentity[],
  options: EndTreeOptions,
): Promise<EndTreeReport> {
  const started = performance.now();
  const pollMs = options.pollMs ?? 25;
  const skip = options.skipGrace;
  const scanner = new TreeScanner(rootPid, marker, known);
  let live = scanner.scan();
  const found = live.size;
  const seen = new Set(live.keys());

  // Polite phase: each member receives every polite signal sent so far, including
  // members that appear during the grace period.
  const polite = options.politeSignals;
  const sentTo = new Map<string, number>();
  let sentCount = 0;
  const catchUp = (): void => {
    const behind = [...live].filter(([key]) => (sentTo.get(key) ?? 0) < sentCount);
    for (let i = 0; i < sentCount; i++) {
      const due = behind.filter(([key]) => (sentTo.get(key) ?? 0) <= i).map(([, identity]) => identity);
      if (due.length > 0) scanner.sendAll(due, polite[i] as NodeJS.Signals);
    }
    if (sentCount === polite.length && behind.length > 0)
      scanner.sendAll(
        behind.map(([, identity]) => identity),
        "SIGCONT",
      );
    for (const [key] of live) {
      seen.add(key);
      sentTo.set(key, sentCount);
    }
  };
  const graceEnd = started + options.graceMs;
  // The first wake ends a pause at once; after it, polls alone (the signal stays aborted).
  const wake = options.wake;
  let woken = wake?.aborted ?? false;
  const either = wake && skip && typeof AbortSignal.any === "function" ? AbortSignal.any([skip, wake]) : (wake ?? skip);
  const waitUntil = async (deadline: number): Promise<void> => {
    while (live.size > 0 && !skip?.aborted && performance.now() < deadline) {
      // Most trees end within a few hundred ms of the polite signals; after that,
      // scanning less often keeps a long grace period from costing much CPU.
      const interval = performance.now() - started < 1000 ? pollMs : pollMs * 4;
      await pause(Math.min(interval, deadline - performance.now()), woken ? skip : either);
      woken ||= wake?.aborted ?? false;
      live = scanner.scan();
      catchUp();
    }
  };
  for (let i = 0; i < polite.length && live.size > 0 && !skip?.aborted; i++) {
    sentCount = i + 1;
    catchUp();
    if (i < polite.length - 1) await waitUntil(Math.min(graceEnd, performance.now() + (options.politeGapMs ?? 0)));
  }
  if (polite.length > 0) await waitUntil(graceEnd);

  // Kill phase: SIGSTOP everything first so no parent can respawn what is being
  // killed, re-scan until no unfrozen member is left, then SIGKILL all of it.
  const killEnd = performance.now() + (options.killWaitMs ?? 1000);
  // A tree the last scan found empty is not scanned again a moment later (a whole /proc table).
  if (live.size > 0) live = scanner.scan();
  while (live.size > 0) {
    const frozen = new Map<string, ProcessIdentity>();
    for (let round = 0; round < FREEZE_ROUNDS; round++) {
      const fresh = [...live].filter(([key]) => !frozen.has(key));
      if (fresh.length === 0) break;
      scanner.sendAll(
        fresh.map(([, identity]) => identity),
        "SIGSTOP",
      );
      for (const [key, identity] of fresh) {
        seen.add(key);
        frozen.set(key, identity);
      }
      live = scanner.scan();
    }
    scanner.sendAll(frozen.values(), "SIGKILL");
    // Dying takes a moment: watch just the killed pids (cheap), then re-scan everything once.
    while (
      performance.now() < killEnd &&
      [...frozen.values()].some((identity) => isSame(identity, readProcess(identity.pid)))
    ) {
      await pause(Math.min(5, killEnd - performance.now()));
    }
    live = scanner.scan();
    if (performance.now() >= killEnd) break;
  }

  return {
    found,
    lateFound: seen.size - found,
    signalled: scanner.signalled.size,
    killed: scanner.killed.size,
    survivors: live.size,
    durationMs: Math.round(performance.now() - started),
  };
}
