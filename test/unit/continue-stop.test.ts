// A stop asked while `ralph continue` opens its run: either refused (the run is not live yet) or kept for the
// new runner, never accepted and then moved aside as the old run's leftover STOP. And what else of the old
// runner's continue clears away.
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { prepareContinue } from "../../src/cli/commands/continue.js";
import { defaultSettings } from "../../src/config/run-options.js";
import { requestControl, type ControlOutcome } from "../../src/control/control-request.js";
import { openRun } from "../../src/launch/open-run.js";
import type { StartRunInput } from "../../src/launch/start-run-input.js";
import { readProcess } from "../../src/process/proc-table.js";
import { makeRunView } from "../../src/sandbox/run-view.js";
import { entryKind } from "../../src/store/regular-file.js";
import { runPaths } from "../../src/store/run-paths.js";
import { readStatusFile } from "../../src/store/status-file.js";
import { plan } from "../fixtures/engine-machine.js";
import { isolateGitConfig, tempRepo } from "../helpers/git-repo.js";

const restoreGit = isolateGitConfig();
// The runners' records go to a state directory of this test's own.
const state = mkdtempSync(join(tmpdir(), "ralph-continue-stop-"));
process.env.XDG_STATE_HOME = state;
after(() => {
  restoreGit();
  rmSync(state, { recursive: true, force: true });
});

/** A run as its first runner left it, and how to open it again. */
async function leftRun() {
  const projectDir = tempRepo();
  const paths = runPaths(projectDir, "x");
  const holder = {
    pid: process.pid,
    pid_start: readProcess(process.pid)?.startTime ?? null,
    hostname: hostname(),
    run_id: "x",
    acquired_at: new Date().toISOString(),
  };
  const opener = () => ({ holder, supervision: "tree" as const, notes: [] as string[] });
  const input: StartRunInput = {
    projectDir,
    runId: "x",
    settings: { ...defaultSettings(), sandbox: { ...defaultSettings().sandbox, mode: "off" }, name: "x" },
    plan: plan(),
    previous: null,
    projectLock: false,
  };
  (await openRun(input, opener())).release();
  const previous = readStatusFile(paths.status);
  assert.ok(previous);
  return { projectDir, paths, input, opener, previous };
}

describe("stop --now while ralph continue opens the run", () => {
  test("is refused or kept for the new runner, never moved aside with the old STOP", async () => {
    const { projectDir, paths, input, opener, previous } = await leftRun();
    // The moment in question: the continuing runner holds the run's lock and is about to move the old STOP aside.
    let asked: ControlOutcome | null = null;
    const continued = await openRun(
      {
        ...input,
        previous,
        prepare: () => {
          asked = requestControl(projectDir, "x", "stop-now");
          prepareContinue(paths, previous, input.plan);
        },
      },
      opener(),
    );
    try {
      const outcome = asked as ControlOutcome | null;
      assert.ok(outcome);
      assert.ok(
        !outcome.ok || entryKind(paths.stop) !== "missing",
        `the stop was answered "${outcome.message}", then STOP was moved aside`,
      );
      // Once the run is open, a stop is taken, and stays for the runner to read.
      const now = requestControl(projectDir, "x", "stop-now");
      assert.equal(now.ok, true, now.message);
      assert.equal(entryKind(paths.stop), "file");
    } finally {
      continued.release();
    }
  });
});

test("ralph continue removes the sandbox views its run's dead runner left, and none of the run's files", async () => {
  const { paths, input, previous } = await leftRun();
  const view = makeRunView(paths.dir);
  assert.ok(view !== null && existsSync(join(view, "status.json")));
  prepareContinue(paths, previous, input.plan);
  assert.equal(existsSync(view), false);
  assert.ok(readStatusFile(paths.status));
});
