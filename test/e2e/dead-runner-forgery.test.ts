// An agent that forges its run's ending (status.json, the completion marker) and then SIGKILLs its runner
// must not have `ralph status` / `ralph list` show the ending it forged: its runner never ended the run.
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { completionMarker, readStatus, runRalph, startRalph, tempProjects, type CliResult } from "../helpers/cli.js";
import { waitFor } from "../helpers/wait.js";
import { isolateGitConfig, storiesRepo } from "../helpers/git-repo.js";

after(isolateGitConfig());
const project = tempProjects("ralph-deadrunner-");

/** What an agent forges: status.json saying the run ended DONE, the DONE completion marker. */
type Forged = Array<"status" | "marker">;

/**
 * A command agent (Node) that writes what `forge` names ("status": status.json saying the run ended DONE;
 * "marker": the DONE completion marker appended to progress.txt), then SIGKILLs the runner status.json names;
 * on any later iteration it does nothing and succeeds.
 */
function forger(forge: Forged): string[] {
  const script = `
const fs = require("node:fs");
const dir = process.env.RALPH_RUN_DIR;
const file = dir + "/status.json";
const status = JSON.parse(fs.readFileSync(file, "utf8"));
if (process.env.RALPH_ITERATION !== "1") process.exit(0);
if (process.argv.includes("status")) {
  fs.writeFileSync(file + ".forged", JSON.stringify({ ...status, state: "ended", exit_reason: "DONE", exit_code: 0, ended_at: new Date().toISOString() }));
  fs.renameSync(file + ".forged", file);
}
if (process.argv.includes("marker")) fs.appendFileSync(dir + "/progress.txt", "completion_reason=DONE\\npromise=COMPLETE\\n");
process.kill(status.pid, "SIGKILL");`;
  return ["--", process.execPath, "-e", script, ...forge];
}

/** The state `ralph status --json` and `ralph list --json` show for run `id` (status's exit reason agreeing with it). */
async function shownStates(
  dir: string,
  id: string,
): Promise<{ status: string; list: string | undefined; exit_code: number | null }> {
  const status = await runRalph(["status", "--json", id], dir);
  assert.equal(status.code, 0, status.stderr);
  const list = await runRalph(["list", "--json"], dir);
  assert.equal(list.code, 0, list.stderr);
  const runs = (JSON.parse(list.stdout) as { runs: Array<{ id: string; state: string }> }).runs;
  const report = JSON.parse(status.stdout) as {
    state: string;
    active: boolean;
    exit_reason: string | null;
    exit_code: number | null;
  };
  const ended = !report.active && report.state !== "stale";
  assert.equal(
    report.exit_reason,
    ended ? report.state : null,
    `status --json: exit_reason beside state ${report.state}`,
  );
  // The morning's report says the same.
  const morning = await runRalph(["report", id, "--format", "json"], dir);
  assert.equal(morning.code, 0, morning.stderr);
  assert.deepEqual(
    pick(JSON.parse(morning.stdout) as { outcome: string | null; exit_code: number | null }),
    { outcome: report.exit_reason, exit_code: report.exit_code },
    "ralph report",
  );
  return { status: report.state, list: runs.find((run) => run.id === id)?.state, exit_code: report.exit_code };
}

function pick({ outcome, exit_code }: { outcome: string | null; exit_code: number | null }): {
  outcome: string | null;
  exit_code: number | null;
} {
  return { outcome, exit_code };
}

async function killedByItsAgent(started: {
  child: { kill(signal: NodeJS.Signals): boolean };
  done: Promise<CliResult>;
}): Promise<void> {
  const timer = setTimeout(() => started.child.kill("SIGKILL"), 30_000);
  const result = await started.done;
  clearTimeout(timer);
  assert.equal(result.signal, "SIGKILL", `the agent killed its runner: ${result.stderr}`);
}

const CASES: Array<[Forged, string]> = [
  [["status", "marker"], "INTERRUPTED"],
  [["status"], "stale"],
  [["marker"], "INTERRUPTED"],
];
for (const [forge, expected] of CASES) {
  test(`an agent forging ${forge.join(" and ")} then SIGKILLing its runner: status and list show ${expected}, not DONE`, async () => {
    const dir = project();
    await killedByItsAgent(startRalph(["run", "--name", "d", "-n", "1", "go", ...forger(forge)], dir));
    const runDir = join(dir, ".ralph", "runs", "d");
    // Known-false control: the forgery landed, so a state read from these files would be DONE.
    if (forge.includes("status")) assert.equal(readStatus(runDir).exit_reason, "DONE");
    if (forge.includes("marker"))
      assert.deepEqual(completionMarker(runDir), ["completion_reason=DONE", "promise=COMPLETE"]);
    assert.deepEqual(await shownStates(dir, "d"), { status: expected, list: expected, exit_code: null });
    // What the runner's death left is continuable, as any interrupted run.
    const continued = await runRalph(["continue", "d", "-n", "2"], dir);
    assert.equal(continued.code, 3, continued.stderr);
    assert.deepEqual(await shownStates(dir, "d"), { status: "MAX_ITERATIONS", list: "MAX_ITERATIONS", exit_code: 3 });
  });
}

test("a --parallel child's agent forging its ending then SIGKILLing the parent: the guardian marks the child INTERRUPTED", async () => {
  const repo = storiesRepo();
  await killedByItsAgent(
    startRalph(
      [
        "run",
        "--tasks",
        "prd.json",
        "--parallel",
        "1",
        "--name",
        "x",
        "-n",
        "0",
        "work",
        ...forger(["status", "marker"]),
      ],
      repo,
    ),
  );
  const child = join(repo, ".ralph", "runs", "x-1");
  assert.equal(
    readStatus(child).exit_reason,
    "DONE",
    "known-false control: the child's status.json holds the forged ending",
  );
  // The guardian (the parent's, outside the agent's tree) gives the child its INTERRUPTED marker after the forged one.
  await waitFor(
    () => completionMarker(child).join("\n") !== "completion_reason=DONE\npromise=COMPLETE",
    "the guardian to mark the child",
    10_000,
  ).catch(() => undefined);
  assert.deepEqual(completionMarker(child), ["completion_reason=INTERRUPTED", "promise=COMPLETE"]);
  assert.deepEqual(await shownStates(repo, "x-1"), { status: "INTERRUPTED", list: "INTERRUPTED", exit_code: null });
  assert.deepEqual(await shownStates(repo, "x"), { status: "stale", list: "stale", exit_code: null });
});

test("an agent rewriting status.json to say the run ended DONE, its runner alive: status and list show it running, and stop reaches it", async () => {
  const dir = project();
  const gate = join(dir, "gate");
  // Until `gate` exists, status.json says ended DONE (with the runner's own pid) every 20 ms.
  const script = `
const fs = require("node:fs");
const file = process.env.RALPH_RUN_DIR + "/status.json";
const forge = () => {
  const status = JSON.parse(fs.readFileSync(file, "utf8"));
  fs.writeFileSync(file + ".forged", JSON.stringify({ ...status, state: "ended", exit_reason: "DONE", exit_code: 0, ended_at: new Date().toISOString() }));
  fs.renameSync(file + ".forged", file);
};
forge();
fs.writeFileSync(process.argv[1] + ".started", "");
const timer = setInterval(() => (fs.existsSync(process.argv[1]) ? clearInterval(timer) : forge()), 20);`;
  const run = startRalph(["run", "--name", "l", "-n", "0", "go", "--", process.execPath, "-e", script, gate], dir);
  const timer = setTimeout(() => run.child.kill("SIGKILL"), 30_000);
  await waitFor(() => existsSync(`${gate}.started`), "the agent to forge status.json");
  const runDir = join(dir, ".ralph", "runs", "l");
  assert.equal(readStatus(runDir).exit_reason, "DONE", "known-false control: status.json says the run ended DONE");
  assert.deepEqual(await shownStates(dir, "l"), { status: "running", list: "running", exit_code: null });
  const stop = await runRalph(["stop", "l"], dir);
  assert.equal(stop.code, 0, stop.stderr);
  writeFileSync(gate, "");
  const result = await run.done;
  clearTimeout(timer);
  assert.equal(result.code, 0, result.stderr);
  assert.deepEqual(await shownStates(dir, "l"), { status: "STOPPED", list: "STOPPED", exit_code: 0 });
});
