// Entry point of the guardian process (see guardian.ts).
// argv: MARKER_KEY MARKER_VALUE GRACE_MS [CGROUP_DIR [V1_COMPANION...]]. Reads stdin until it closes.
import { CgroupTree } from "./cgroup-tree.js";
import { endCgroup } from "./end-cgroup.js";
import { endTree } from "./kill-tree.js";
import { DISPOSE_MESSAGE } from "./guardian.js";
import { ignoreDebugSignal } from "./debug-signal.js";

ignoreDebugSignal();
const [key, value, graceText, cgroupDir, ...companions] = process.argv.slice(2);
const graceMs = Number(graceText);

let received = "";
let finished = false;

async function onPipeClosed(): Promise<void> {
  if (finished) return;
  finished = true;
  if (received.includes(DISPOSE_MESSAGE)) return;
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
