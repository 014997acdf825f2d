// What a run's agent writes in the project does not change what ralph trusts: settings.json edited for
// `continue`, a planted run directory, deleted locks and status.json, events.jsonl swapped for a link.
import { after, test } from "node:test";
import assert from "node:assert/strict";
import type { ChildProcess } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  agentAfter,
  cleanEnv,
  completionMarker,
  finishWithin,
  readStatus,
  runRalph,
  startRalph,
  tempProjects,
} from "../helpers/cli.js";
import { waitForFile } from "../helpers/wait.js";

const project = tempProjects("ralph-records-");
const children: ChildProcess[] = [];
after(() => children.forEach((child) => child.kill("SIGKILL")));
const runDir = (dir: string, id: string) => join(dir, ".ralph", "runs", id);
const node = `"${process.execPath}"`;

/** A node one-liner for the agent's shell: `code` gets `fs` and the run directory as `dir`. */
const inNode = (code: string) =>
  `${node} -e 'const fs = require("fs"); const dir = process.env.RALPH_RUN_DIR; ${code}'`;

test("an agent's edit of settings.json (caps off, a notify command added) is refused by ralph continue; untouched, it continues", async () => {
  const dir = project();
  const planted = join(dir, "planted-ran");
  const edit = inNode(
    `const f = dir + "/settings.json"; const s = JSON.parse(fs.readFileSync(f)); s.maxCostUsd = null; s.maxIterations = 0; s.notifyTargets = [{ kind: "command", argv: ["touch", "${planted}"], events: ["run_started"] }]; fs.writeFileSync(f, JSON.stringify(s, null, 2) + "\\n");`,
  );
  const first = await runRalph(
    [
      "run",
      "--name",
      "e",
      "-n",
      "1",
      "--max-cost",
      "5",
      "go",
      ...agentAfter(`[ "$RALPH_ITERATION" = 1 ] && ${edit}; true`),
    ],
    dir,
  );
  assert.equal(first.code, 3, first.stderr);
  assert.match(
    readFileSync(join(runDir(dir, "e"), "settings.json"), "utf8"),
    /planted-ran/,
    "the agent's edit is there",
  );
  const continued = await runRalph(["continue", "e", "-n", "3"], dir);
  assert.equal(continued.code, 2);
  assert.match(
    continued.stderr,
    /^ralph: run e: settings\.json is not what ralph wrote \(its digest differs from the record in .+\); refusing to continue with it\. Start a new run with the settings you want\n$/,
  );
  assert.equal(existsSync(planted), false, "the planted notify command never ran");
  assert.equal(readStatus(runDir(dir, "e")).iteration, 1);
  // Known-false control: the same run, untouched, continues (so the refusal is the digest's doing).
  const clean = await runRalph(["run", "--name", "c", "-n", "1", "go", ...agentAfter("true")], dir);
  assert.equal(clean.code, 3, clean.stderr);
  const again = await runRalph(["continue", "c", "-n", "2"], dir);
  assert.equal(again.code, 3, again.stderr);
  assert.equal(readStatus(runDir(dir, "c")).iteration, 2);
});

test("a run directory the agent planted (future started_at, its own agent) is listed as foreign and never picked by a bare continue or status", async () => {
  const dir = project();
  const forgedRan = join(dir, "forged-ran");
  const plant = inNode(
    `const to = dir + "/../zz-forged"; fs.mkdirSync(to); for (const n of ["settings.json", "state.md"]) fs.copyFileSync(dir + "/" + n, to + "/" + n);` +
      ` const s = JSON.parse(fs.readFileSync(to + "/settings.json")); s.agentCmd = ["touch", "${forgedRan}"]; s.maxIterations = 9; fs.writeFileSync(to + "/settings.json", JSON.stringify(s));` +
      ` const st = JSON.parse(fs.readFileSync(dir + "/status.json")); Object.assign(st, { run_id: "zz-forged", state: "ended", exit_reason: "STOPPED", iteration: 0, max_iterations: 9, started_at: "2999-01-01T00:00:00.000Z" }); fs.writeFileSync(to + "/status.json", JSON.stringify(st));`,
  );
  const first = await runRalph(["run", "--name", "real", "-n", "1", "go", ...agentAfter(plant)], dir);
  assert.equal(first.code, 3, first.stderr);
  assert.ok(
    existsSync(join(runDir(dir, "zz-forged"), "status.json")),
    `the planted run is there: ${readFileSync(join(runDir(dir, "real"), "iter-001.log"), "utf8")}`,
  );
  const list = JSON.parse((await runRalph(["list", "--json"], dir)).stdout) as {
    runs: Array<{ id: string; state: string }>;
  };
  assert.deepEqual(
    list.runs.map((run) => [run.id, run.state]),
    [
      ["real", "MAX_ITERATIONS"],
      ["zz-forged", "foreign"],
    ],
  );
  const status = await runRalph(["status"], dir);
  assert.match(status.stdout, /^run {8}real \(/m);
  const bare = await runRalph(["continue", "-n", "2"], dir);
  assert.equal(bare.code, 3, bare.stderr);
  assert.equal(readStatus(runDir(dir, "real")).iteration, 2, "the bare continue went on with the real run");
  const named = await runRalph(["continue", "zz-forged"], dir);
  assert.equal(named.code, 2);
  assert.match(
    named.stderr,
    /^ralph: run zz-forged is foreign: ralph has no record of creating .+; it is not continued\n$/,
  );
  assert.equal(existsSync(forgedRan), false, "the planted agent command never ran");
});

test("an agent that deletes the project lock, the run lock and status.json: a second unnamed run is refused and list still shows the run live", async () => {
  const dir = project();
  const gate = join(dir, "gate");
  const locks = `"$RALPH_RUN_DIR/../../lock" "$RALPH_RUN_DIR/lock"`;
  const erase = `rm -f ${locks} "$RALPH_RUN_DIR/status.json"; for f in ${locks}; do [ -e "$f" ] || echo gone >> "${gate}.erased"; done; touch "${gate}.started"; i=0; while [ ! -e "${gate}" ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); done`;
  const started = startRalph(["run", "-n", "1", "go", ...agentAfter(erase)], dir, cleanEnv());
  children.push(started.child);
  await waitForFile(`${gate}.started`);
  // Known-false control: both locks really were gone, so they alone could not refuse anything. (status.json
  // is written again at the runner's next update; list-runs.test.ts covers a run with none at all.)
  assert.equal(readFileSync(`${gate}.erased`, "utf8"), "gone\ngone\n");
  const ids = JSON.parse((await runRalph(["list", "--json"], dir)).stdout) as {
    runs: Array<{ id: string; state: string; active: boolean }>;
  };
  assert.equal(ids.runs.length, 1);
  const id = ids.runs[0]?.id ?? "";
  assert.deepEqual(
    ids.runs.map((run) => [run.state, run.active]),
    [["running", true]],
  );
  const second = await runRalph(["run", "-n", "1", "go", ...agentAfter("true")], dir);
  assert.equal(second.code, 2);
  assert.match(
    second.stderr,
    new RegExp(
      `^ralph: another run is active in this project \\(${id}, pid \\d+\\); stop it, or give --name to run several\\n$`,
    ),
  );
  writeFileSync(gate, "");
  const result = await finishWithin(started, 20_000);
  assert.equal(result.code, 3, result.stderr);
});

test("an agent that replaces events.jsonl with a link ends the run FAILED, naming the file; nothing is written through the link", async () => {
  const dir = project();
  const target = join(dir, "elsewhere.jsonl");
  writeFileSync(target, "");
  const swap = `[ "$RALPH_ITERATION" = 1 ] && rm "$RALPH_RUN_DIR/events.jsonl" && ln -s "${target}" "$RALPH_RUN_DIR/events.jsonl"; true`;
  const result = await finishWithin(
    startRalph(["run", "--name", "l", "-n", "3", "go", ...agentAfter(swap)], dir, cleanEnv()),
    30_000,
  );
  assert.equal(result.code, 1, result.stderr);
  assert.deepEqual(completionMarker(runDir(dir, "l")), ["completion_reason=FAILED", "promise=COMPLETE"]);
  assert.equal(readStatus(runDir(dir, "l")).iteration, 1);
  assert.match(
    readFileSync(join(runDir(dir, "l"), "run.log"), "utf8"),
    /events\.jsonl: replaced by a symbolic link while the run was recording to it/,
  );
  assert.equal(readFileSync(target, "utf8"), "", "nothing went through the link");
});
