// Entry point of the guardian process (see guardian.ts).
// argv: MARKER_KEY MARKER_VALUE GRACE_MS [CGROUP_DIR [V1_COMPANION...]]. Reads stdin until it closes; the runs
// to mark INTERRUPTED come from its lines, or from MARK_ENV when the Perl waiter read them (see guardian.ts).
import { CgroupTree } from "./cgroup-tree.js";
import { endCgroup } from "./end-cgroup.js";
import { endTree } from "./kill-tree.js";
import { DISPOSE_MESSAGE, MARK_ENV, runsToMark } from "./guardian.js";
import { markInterrupted } from "../store/progress-log.js";
import { ignoreDebugSignal } from "./debug-signal.js";

ignoreDebugSignal();
const [key, value, graceText, cgroupDir, ...companions] = process.argv.slice(2);
const graceMs = Number(graceText);

let received = "";
let finished = false;

/**
 * Gives each run the runner had not unmarked (ended) its INTERRUPTED completion marker: it was interrupted by
 * the runner's death. The runner's word on this pipe decides which runs, never a marker in progress.txt.
 */
function markRuns(): void {
  const runs = new Set([
    ...(process.env[MARK_ENV] ?? "").split("\n").filter((line) => line !== ""),
    ...runsToMark(received.split("\n")),
  ]);
  for (const progress of runs) {
    try {
      markInterrupted(progress);
    } catch {
      // a run directory that is gone or not what it was: nothing to say there
    }
  }
}

async function onPipeClosed(): Promise<void> {
  if (finished) return;
  finished = true;
  if (received.split("\n").includes(DISPOSE_MESSAGE.trim())) return;
  try {
    await endTrees();
  } finally {
    markRuns();
  }
}

async function endTrees(): Promise<void> {
  if (key === undefined || value === undefined || key === "" || value === "") return;
  // The runner died: its agent tree is now orphaned, found by its cgroup, else only by the marker.
  const options = {
    graceMs: Number.isFinite(graceMs) && graceMs >= 0 ? graceMs : 5000,
    politeSignals: ["SIGINT", "SIGTERM"] as NodeJS.Signals[],
    politeGapMs: 300,
  };
  const cgroup = cgroupDir === undefined ? null : new CgroupTree(cgroupDir, companions);
  if (cgroup === null) {
    await endTree(null, { key, value }, [], options);
    return;
  }
  await endCgroup(cgroup, options);
  await cgroup.remove();
  // A further net: anything carrying the marker outside the cgroup (nothing should) is killed too.
  await endTree(null, { key, value }, [], { graceMs: 0, politeSignals: [] });
}

process.stdin.on("data", (chunk: Buffer) => {
  received += chunk.toString("utf8");
});
process.stdin.on("end", () => void onPipeClosed());
process.stdin.on("close", () => void onPipeClosed());
process.stdin.on("error", () => void onPipeClosed());
process.stdin.resume();
