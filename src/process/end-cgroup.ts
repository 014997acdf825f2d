// Ending every process of a cgroup: the polite signals to each member, a grace period with
// re-reads of cgroup.procs, then the kernel kills whatever is left at once.
import { watch, type FSWatcher } from "node:fs";
import { join } from "node:path";
import type { CgroupTree } from "./cgroup-tree.js";
import { type EndTreeOptions, type EndTreeReport } from "./kill-tree.js";
import { pause } from "../util/pause.js";

function send(pid: number, signal: NodeJS.Signals): boolean {
  if (pid === process.pid) return false;
  try {
    process.kill(pid, signal);
    return true;
  } catch {
    return false;
  }
}

/**
 * Ends a cgroup's processes as endTree does a /proc tree, with membership from the kernel:
 * nothing can leave a cgroup by forking, changing session or losing its parent.
 */
export async function endCgroup(tree: CgroupTree, options: EndTreeOptions): Promise<EndTreeReport> {
  const started = performance.now();
  // After most iterations the agent left nothing behind: one read of cgroup.events says so.
  if (!tree.populated()) return { found: 0, lateFound: 0, signalled: 0, killed: 0, survivors: 0, durationMs: 0 };
  const pollMs = options.pollMs ?? 25;
  const skip = options.skipGrace;
  const polite = options.politeSignals;
  const seen = new Set<number>();
  const signalled = new Set<number>();
  // pid → how many of the polite signals it has received.
  const sentTo = new Map<number, number>();
  let live = tree.members();
  const found = live.length;
  let sentCount = 0;
  const catchUp = (): void => {
    for (const pid of live) {
      seen.add(pid);
      const had = sentTo.get(pid) ?? 0;
      for (let i = had; i < sentCount; i++) if (send(pid, polite[i] as NodeJS.Signals)) signalled.add(pid);
      if (had < sentCount && sentCount === polite.length) send(pid, "SIGCONT");
      sentTo.set(pid, sentCount);
    }
  };
  const graceEnd = started + options.graceMs;
  // The kernel reports "populated 0" in cgroup.events as a file change: the wait ends the moment the
  // last member is gone instead of at the next re-read (after a first change, re-reads alone).
  const changed = new AbortController();
  let watcher: FSWatcher | null = null;
  try {
    watcher = watch(join(tree.dir, "cgroup.events"), () => changed.abort());
    watcher.on("error", () => undefined);
  } catch {
    // no inotify here: re-reads alone
  }
  // AbortSignal.any arrived in Node 20.3; without it a skip is noticed at the next re-read.
  const either =
    skip && typeof AbortSignal.any === "function" ? AbortSignal.any([skip, changed.signal]) : changed.signal;
  const waitUntil = async (deadline: number): Promise<void> => {
    while (live.length > 0 && !skip?.aborted && performance.now() < deadline) {
      const interval = performance.now() - started < 1000 ? pollMs : pollMs * 4;
      await pause(Math.min(interval, deadline - performance.now()), changed.signal.aborted ? skip : either);
      live = tree.members();
      catchUp();
    }
  };
  for (let i = 0; i < polite.length && live.length > 0 && !skip?.aborted; i++) {
    sentCount = i + 1;
    catchUp();
    if (i < polite.length - 1) await waitUntil(Math.min(graceEnd, performance.now() + (options.politeGapMs ?? 0)));
  }
  if (polite.length > 0) await waitUntil(graceEnd);

  watcher?.close();
  let killed = 0;
  const killEnd = performance.now() + (options.killWaitMs ?? 1000);
  if (tree.populated()) {
    const left = tree.members();
    killed = left.length;
    for (const pid of left) {
      seen.add(pid);
      signalled.add(pid);
    }
    tree.kill();
    while (tree.populated() && performance.now() < killEnd) await pause(Math.min(2, killEnd - performance.now()));
  }
  return {
    found,
    lateFound: seen.size - found,
    signalled: signalled.size,
    killed,
    survivors: tree.members().length,
    durationMs: Math.round(performance.now() - started),
  };
}
