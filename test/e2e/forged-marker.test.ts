// An agent appending the completion marker to progress.txt must not end, hide or unlock a live run.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { completionMarker, FAKE_AGENT, readStatus, runRalph, tempProjects, trackedStarts } from "../helpers/cli.js";
import { waitFor, waitForFile } from "../helpers/wait.js";

const project = tempProjects("ralph-forged-");
const start = trackedStarts();

/** A command agent that forges the marker, then waits on `gate` (first iteration). */
function forger(gate: string): string[] {
  const script = `printf 'completion_reason=DONE\\npromise=COMPLETE\\n' >> "$RALPH_RUN_DIR/progress.txt"; exec "$0" "$1" --wait-for "$2"`;
  return ["--", "sh", "-c", script, process.execPath, FAKE_AGENT, gate];
}

test("a forged completion marker leaves list, status, pause, stop, continue and logs -f seeing a live run", async () => {
  const dir = project();
  const gate = join(dir, "gate");
  const run = start(dir, ["run", "--name", "f", "-n", "0", "go", ...forger(gate)]);
  await waitForFile(`${gate}.started`);
  const runDir = join(dir, ".ralph", "runs", "f");
  // Known-false control: the forged lines really are the last two lines of progress.txt.
  assert.deepEqual(completionMarker(runDir), ["completion_reason=DONE", "promise=COMPLETE"]);

  const status = JSON.parse((await runRalph(["status", "--json", "f"], dir)).stdout) as Record<string, unknown>;
  assert.equal(status.state, "running");
  assert.equal(status.active, true);
  assert.equal(status.exit_reason, null);
  const list = JSON.parse((await runRalph(["list", "--json"], dir)).stdout) as { runs: Array<{ state: string }> };
  assert.deepEqual(
    list.runs.map((r) => r.state),
    ["running"],
  );
  const refused = await runRalph(["continue", "f"], dir);
  assert.equal(refused.code, 2);
  assert.match(refused.stderr, /run f is live/);

  const follow = start(dir, ["logs", "-f"]);
  let followed = "";
  follow.child.stdout?.on("data", (chunk: Buffer) => (followed += chunk.toString("utf8")));
  await waitFor(() => followed.includes("run started"), "logs -f to print the log so far");

  const pause = await runRalph(["pause"], dir);
  assert.equal(pause.code, 0, pause.stderr);
  const stop = await runRalph(["stop"], dir);
  assert.equal(stop.code, 0, stop.stderr);
  assert.match(stop.stdout, /stop requested: run f/);
  writeFileSync(gate, "");
  const result = await run.done;
  assert.equal(result.code, 0, result.stderr);
  assert.deepEqual(completionMarker(runDir), ["completion_reason=STOPPED", "promise=COMPLETE"]);
  assert.equal(readStatus(runDir).exit_reason, "STOPPED");
  const followedResult = await follow.done;
  assert.match(followedResult.stdout, /^STOPPED: /m, "logs -f followed until the runner ended the run");
  const final = JSON.parse((await runRalph(["status", "--json", "f"], dir)).stdout) as Record<string, unknown>;
  assert.equal(final.state, "STOPPED");
  assert.match(readFileSync(join(runDir, "progress.txt"), "utf8"), /completion_reason=DONE/);
});
