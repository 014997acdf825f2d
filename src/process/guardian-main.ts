// Entry point of the guardian process (see guardian.ts).
// argv: MARKER_KEY MARKER_VALUE GRACE_MS. Reads stdin until it closes.
import { ignoreDebugSignal } from "./debug-signal.js";
import { endTree } from "./kill-tree.js";
import { DISPOSE_MESSAGE } from "./guardian.js";

ignoreDebugSignal();
const [key, value, graceText] = process.argv.slice(2);
const graceMs = Number(graceText);

let received = "";
let finished = false;

async function onPipeClosed(): Promise<void> {
  if (finished) return;
  finished = true;
  if (received.includes(DISPOSE_MESSAGE)) return;
  if (key === undefined || value === undefined || key === "" || value === "") return;
  // The runner died: its agent tree is now orphaned and found only by the marker.
  await endTree(null, { key, value }, [], {
    graceMs: Number.isFinite(graceMs) && graceMs >= 0 ? graceMs : 5000,
    politeSignals: ["SIGINT", "SIGTERM"],
    politeGapMs: 300,
  });
}

process.stdin.on("data", (chunk: Buffer) => {
  received += chunk.toString("utf8");
});
process.stdin.on("end", () => void onPipeClosed());
process.stdin.on("close", () => void onPipeClosed());
process.stdin.on("error", () => void onPipeClosed());
process.stdin.resume();
