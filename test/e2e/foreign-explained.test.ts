// `foreign` is explained wherever it appears: a run started with another XDG_STATE_HOME (or HOME) is one ralph
// has no record of, and list, status and report say so in a few words, with what to do; report never says
// "not ended" beside the Ended time its status.json gives.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after } from "node:test";
import { cleanEnv, fakeAgent, runRalph, tempProjects } from "../helpers/cli.js";

const project = tempProjects("ralph-foreign-");
const states = [mkdtempSync(join(tmpdir(), "ralph-state-a-")), mkdtempSync(join(tmpdir(), "ralph-state-b-"))];
after(() => states.forEach((dir) => rmSync(dir, { recursive: true, force: true })));
const [first, other] = states as [string, string];

test("a run started with another XDG_STATE_HOME: list, status and report say why it is foreign and what to do", async () => {
  const dir = project();
  const started = await runRalph(
    ["run", "--name", "away", "-n", "1", "--completion-promise", "DONE", "go", ...fakeAgent("--promise", "DONE")],
    dir,
    cleanEnv({ XDG_STATE_HOME: first }),
  );
  assert.equal(started.code, 0, started.stdout + started.stderr);
  const env = cleanEnv({ XDG_STATE_HOME: other });
  const why =
    /ralph has no record of starting it: it was started with another HOME or XDG_STATE_HOME \(this ralph keeps its records in \S+ralph-state-b-\S+\/ralph\/runs\)/;

  const list = await runRalph(["list"], dir, env);
  assert.equal(list.code, 0, list.stderr);
  assert.match(list.stdout, /^away\s+foreign\s/m);
  assert.match(
    list.stdout,
    new RegExp(
      `^foreign: ${why.source}.*; to see and control it, run ralph with the HOME or XDG_STATE_HOME it was started with; if it is not yours, remove \\.ralph/runs/away$`,
      "m",
    ),
  );

  const status = await runRalph(["status", "away"], dir, env);
  assert.equal(status.code, 0, status.stderr);
  assert.match(status.stdout, new RegExp(`^state {6}foreign: ${why.source}`, "m"));
  assert.match(
    status.stdout,
    /^next {7}to see and control it, run ralph with the HOME or XDG_STATE_HOME it was started with/m,
  );

  const report = await runRalph(["report", "away"], dir, env);
  assert.equal(report.code, 0, report.stderr);
  assert.match(report.stdout, /^# ralph run away: foreign$/m);
  assert.match(report.stdout, /^Foreign: ralph has no record of starting it/m);
  assert.doesNotMatch(report.stdout, /not ended/);
  assert.match(report.stdout, /^\| Ended \| \S+ \(as its own status\.json says\) \|$/m);

  // Control: with the state directory it was started with, the same run is DONE, and nothing says foreign.
  const home = await runRalph(["report", "away"], dir, cleanEnv({ XDG_STATE_HOME: first }));
  assert.match(home.stdout, /^# ralph run away: DONE$/m);
  assert.doesNotMatch(home.stdout, /oreign/);
});
