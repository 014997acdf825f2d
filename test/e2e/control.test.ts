// Control from outside: sentinels, state.md, locks, and the run commands, with the built CLI.
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Ajv2020 } from "ajv/dist/2020.js";
import {
  completionMarker,
  fakeAgent,
  processAlive,
  readEvents,
  readStatus,
  runRalph,
  startRalph,
  tempProjects,
} from "../helpers/cli.js";
import { waitFor, waitForFile } from "../helpers/wait.js";

const project = tempProjects("ralph-control-");
const children: Array<{ kill(signal: NodeJS.Signals): boolean }> = [];
after(() => children.forEach((child) => child.kill("SIGKILL")));

function start(dir: string, args: string[]) {
  const started = startRalph(args, dir);
  children.push(started.child);
  return started;
}

const runDir = (dir: string, id: string) => join(dir, ".ralph", "runs", id);
const logOf = (dir: string, id: string) => readFileSync(join(runDir(dir, id), "run.log"), "utf8");
const count = (text: string, pattern: RegExp) => (text.match(pattern) ?? []).length;

describe("sentinels and state.md", () => {
  test("PAUSE during an iteration holds the next one until removed; paused/resumed logged once each", async () => {
    const dir = project();
    const gate = join(dir, "gate");
    const touch = join(dir, "iterations");
    const { done } = start(dir, [
      "run",
      "--name",
      "p",
      "-n",
      "2",
      "go",
      ...fakeAgent("--wait-for", gate, "--touch", touch),
    ]);
    await waitForFile(`${gate}.started`);
    writeFileSync(join(runDir(dir, "p"), "PAUSE"), "");
    writeFileSync(gate, "");
    await waitFor(() => readStatus(runDir(dir, "p")).state === "paused", "the run to pause");
    assert.equal(readFileSync(touch, "utf8"), "1\n");
    const removedAt = Date.now();
    unlinkSync(join(runDir(dir, "p"), "PAUSE"));
    const result = await done;
    assert.equal(result.code, 3, result.stderr);
    const log = logOf(dir, "p");
    assert.equal(count(log, / paused$/gm), 1);
    assert.equal(count(log, / resumed$/gm), 1);
    const second = readEvents(runDir(dir, "p")).find((e) => e.type === "iteration_started" && e.iteration === 2);
    assert.ok(
      second && Date.parse(String(second.ts)) >= removedAt - 5,
      "iteration 2 started only after PAUSE was removed",
    );
    assert.equal(readFileSync(touch, "utf8"), "1\n2\n");
  });

  test("paused before iteration 2, whose log is made ahead: logs --iteration 2 says it has no output; the empty log goes with the run", async () => {
    const dir = project();
    const gate = join(dir, "gate");
    const { done } = start(dir, [
      "run",
      "--name",
      "pa",
      "-n",
      "2",
      "go",
      ...fakeAgent("--wait-for", gate, "--print", "one"),
    ]);
    await waitForFile(`${gate}.started`);
    writeFileSync(join(runDir(dir, "pa"), "PAUSE"), "");
    writeFileSync(gate, "");
    await waitFor(() => readStatus(runDir(dir, "pa")).state === "paused", "the run to pause");
    const ahead = join(runDir(dir, "pa"), "iter-002.log");
    await waitForFile(ahead);
    const logs = await runRalph(["logs", "pa", "--iteration", "2"], dir);
    assert.equal(logs.code, 2, logs.stdout);
    assert.match(logs.stderr, /--iteration 2: run pa has no output for that iteration/);
    assert.equal((await runRalph(["logs", "pa", "--iteration", "1"], dir)).stdout, "── iteration 1/2 ──\n  one\n");
    assert.equal((await runRalph(["stop", "pa"], dir)).code, 0);
    assert.equal((await done).code, 0);
    assert.equal(existsSync(ahead), false, "the log made for iteration 2 went with the run");
  });

  test("STOP while paused ends the run with STOPPED", async () => {
    const dir = project();
    const { done } = start(dir, ["run", "--name", "ps", "-n", "0", "go", ...fakeAgent("--sleep", "200")]);
    await waitForFile(join(runDir(dir, "ps"), "iter-001.log"));
    writeFileSync(join(runDir(dir, "ps"), "PAUSE"), "");
    await waitFor(() => readStatus(runDir(dir, "ps")).state === "paused", "the run to pause");
    const result = await runRalph(["stop", "ps"], dir);
    assert.equal(result.code, 0, result.stderr);
    const ended = await done;
    assert.equal(ended.code, 0, ended.stderr);
    assert.deepEqual(completionMarker(runDir(dir, "ps")), ["completion_reason=STOPPED", "promise=COMPLETE"]);
  });

  test("STOP during an iteration ends the run after it: STOPPED, exit 0, STOP left in place", async () => {
    const dir = project();
    const gate = join(dir, "gate");
    const { done } = start(dir, ["run", "--name", "s", "-n", "0", "go", ...fakeAgent("--wait-for", gate)]);
    await waitForFile(`${gate}.started`);
    writeFileSync(join(runDir(dir, "s"), "STOP"), "");
    writeFileSync(gate, "");
    const result = await done;
    assert.equal(result.code, 0, result.stderr);
    assert.deepEqual(completionMarker(runDir(dir, "s")), ["completion_reason=STOPPED", "promise=COMPLETE"]);
    assert.equal(readStatus(runDir(dir, "s")).iteration, 1);
    assert.ok(existsSync(join(runDir(dir, "s"), "STOP")));
  });

  test("stop --now ends a long-running agent at once with STOPPED", async () => {
    const dir = project();
    const gate = join(dir, "gate");
    const { done } = start(dir, ["run", "--name", "n", "--grace", "2s", "go", ...fakeAgent("--wait-for", gate)]);
    await waitForFile(`${gate}.started`);
    const agentPid = Number(readFileSync(`${gate}.started`, "utf8"));
    assert.ok(processAlive(agentPid));
    const began = Date.now();
    const stop = await runRalph(["stop", "--now"], dir);
    assert.equal(stop.code, 0, stop.stderr);
    const result = await done;
    const took = Date.now() - began;
    assert.equal(result.code, 0, result.stderr);
    assert.deepEqual(completionMarker(runDir(dir, "n")), ["completion_reason=STOPPED", "promise=COMPLETE"]);
    assert.equal(processAlive(agentPid), false);
    assert.ok(took < 10_000, `stop --now took ${took} ms`);
  });

  test("active: false written into state.md mid-run stops it at the next boundary", async () => {
    const dir = project();
    const gate = join(dir, "gate");
    const { done } = start(dir, ["run", "--name", "a", "-n", "0", "go", ...fakeAgent("--wait-for", gate)]);
    await waitForFile(`${gate}.started`);
    const stateFile = join(runDir(dir, "a"), "state.md");
    writeFileSync(stateFile, readFileSync(stateFile, "utf8").replace("active: true", "active: false"));
    writeFileSync(gate, "");
    const result = await done;
    assert.equal(result.code, 0, result.stderr);
    assert.deepEqual(completionMarker(runDir(dir, "a")), ["completion_reason=STOPPED", "promise=COMPLETE"]);
    assert.equal(readStatus(runDir(dir, "a")).iteration, 1);
  });
});

describe("run commands", () => {
  test("a SIGKILLed runner is listed as stale; continue resumes its count and ends with a marker", async () => {
    const dir = project();
    const gate = join(dir, "gate");
    const { child, done } = start(dir, ["run", "--name", "k", "-n", "3", "go", ...fakeAgent("--wait-for", gate)]);
    await waitForFile(`${gate}.started`);
    const list = JSON.parse((await runRalph(["list", "--json"], dir)).stdout) as {
      runs: Array<{ id: string; state: string; active: boolean }>;
    };
    assert.deepEqual(
      list.runs.map((r) => [r.id, r.state, r.active]),
      [["k", "running", true]],
    );
    child.kill("SIGKILL");
    await done;
    const agentPid = Number(readFileSync(`${gate}.started`, "utf8"));
    await waitFor(() => !processAlive(agentPid), "the guardian to end the orphaned agent", 10_000);
    const after = JSON.parse((await runRalph(["list", "--json"], dir)).stdout) as {
      runs: Array<{ id: string; state: string; active: boolean }>;
    };
    assert.deepEqual(
      after.runs.map((r) => [r.id, r.state, r.active]),
      [["k", "stale", false]],
    );
    const active = await runRalph(["list", "--active"], dir);
    assert.match(active.stdout, /no active runs/);
    writeFileSync(gate, "");
    const continued = await runRalph(["continue", "k"], dir);
    assert.equal(continued.code, 3, continued.stderr);
    const status = readStatus(runDir(dir, "k"));
    assert.equal(status.iteration, 3);
    assert.deepEqual(completionMarker(runDir(dir, "k")), ["completion_reason=MAX_ITERATIONS", "promise=COMPLETE"]);
    const started = readEvents(runDir(dir, "k"))
      .filter((e) => e.type === "iteration_started")
      .map((e) => e.iteration);
    assert.deepEqual(started, [1, 2, 3]);
    assert.match(logOf(dir, "k"), /took over the run lock left by dead runner pid \d+/);
  });

  test("continue refuses a live run", async () => {
    const dir = project();
    const gate = join(dir, "gate");
    const { done } = start(dir, ["run", "--name", "live", "go", ...fakeAgent("--wait-for", gate)]);
    await waitForFile(`${gate}.started`);
    const refused = await runRalph(["continue", "live"], dir);
    assert.equal(refused.code, 2);
    assert.match(refused.stderr, /run live is live/);
    writeFileSync(join(runDir(dir, "live"), "STOP"), "");
    writeFileSync(gate, "");
    assert.equal((await done).code, 0);
  });

  test("with two active runs, stop without RUN exits 2 listing both; with RUN it stops only that one", async () => {
    const dir = project();
    const one = start(dir, ["run", "--name", "one", "-n", "0", "go", ...fakeAgent("--sleep", "100")]);
    // `list` orders runs by start time: "two" starts once "one" is under way.
    await waitForFile(join(runDir(dir, "one"), "iter-001.log"));
    const two = start(dir, ["run", "--name", "two", "-n", "0", "go", ...fakeAgent("--sleep", "100")]);
    await waitForFile(join(runDir(dir, "two"), "iter-001.log"));
    const ambiguous = await runRalph(["stop"], dir);
    assert.equal(ambiguous.code, 2);
    assert.match(ambiguous.stderr, /2 active runs.*one, two/);
    assert.equal(ambiguous.stderr.trimEnd().split("\n").length, 1);
    assert.equal((await runRalph(["stop", "one"], dir)).code, 0);
    assert.equal((await one.done).code, 0);
    assert.deepEqual(completionMarker(runDir(dir, "one")), ["completion_reason=STOPPED", "promise=COMPLETE"]);
    const listed = JSON.parse((await runRalph(["list", "--json"], dir)).stdout) as {
      runs: Array<{ id: string; state: string }>;
    };
    assert.deepEqual(
      listed.runs.map((r) => [r.id, r.state]),
      [
        ["one", "STOPPED"],
        ["two", "running"],
      ],
    );
    assert.equal((await runRalph(["stop"], dir)).code, 0, "the single remaining active run is chosen");
    assert.equal((await two.done).code, 0);
  });

  test("a second ralph run on a project with a live run is refused with exit 2 and a clear line", async () => {
    const dir = project();
    const gate = join(dir, "gate");
    const first = start(dir, ["run", "go", ...fakeAgent("--wait-for", gate)]);
    await waitForFile(`${gate}.started`);
    const second = await runRalph(["run", "again", ...fakeAgent()], dir);
    assert.equal(second.code, 2);
    assert.match(second.stderr, /^ralph: another run is active in this project \(\d{8}-\d{6}-[0-9a-f]{4}, pid \d+\)/);
    assert.equal(second.stderr.trimEnd().split("\n").length, 1);
    writeFileSync(gate, "");
    assert.equal((await first.done).code, 3);
    const third = await runRalph(["run", "-n", "1", "again", ...fakeAgent()], dir);
    assert.equal(third.code, 3, "the lock is released when the first run ends");
  });

  test("logs -f follows the run as --live shows it (header, agent output, iteration line, ending) until it ends", async () => {
    const dir = project();
    const gate = join(dir, "gate");
    const run = start(dir, [
      "run",
      "--name",
      "f",
      "-n",
      "1",
      "go",
      ...fakeAgent("--wait-for", gate, "--print", "hello from the agent"),
    ]);
    await waitForFile(`${gate}.started`);
    const follow = start(dir, ["logs", "-f", "f"]);
    let followed = "";
    follow.child.stdout?.on("data", (chunk: Buffer) => (followed += chunk.toString("utf8")));
    await waitFor(() => followed.includes("── iteration 1/1 ──"), "logs -f to print the run so far");
    assert.doesNotMatch(followed, /\[1\/1\]/);
    writeFileSync(gate, "");
    assert.equal((await run.done).code, 3);
    const result = await follow.done;
    assert.equal(result.code, 0, result.stderr);
    assert.match(
      result.stdout,
      /^run started\n(?:supervision: .*\n)?(?:credentials: .*\n)?(?:stall detection needs git, so it is off here: .*\n)?── iteration 1\/1 ──\n {2}hello from the agent\n\[1\/1\] [\d.]+s continue(?: · cpu [^\n]*)?\n/m,
    );
    assert.match(
      result.stdout,
      /^MAX_ITERATIONS: reached max_iterations 1\nnext: give it more iterations: ralph continue f -n 2\n$/m,
    );
    assert.doesNotMatch(result.stdout, /Completed iteration/);
    const one = await runRalph(["logs", "f", "--iteration", "1"], dir);
    assert.equal(one.stdout, "── iteration 1/1 ──\n  hello from the agent\n");
  });

  test("list --json and status --json validate against the schemas in the repo", async () => {
    const dir = project();
    const result = await runRalph(["run", "--name", "j", "-n", "1", "go", ...fakeAgent()], dir);
    assert.equal(result.code, 3);
    const ajv = new Ajv2020({ strict: false });
    const schemaDir = new URL("../../../schemas/", import.meta.url);
    const listSchema = JSON.parse(readFileSync(new URL("list.schema.json", schemaDir), "utf8")) as object;
    const statusSchema = JSON.parse(readFileSync(new URL("status.schema.json", schemaDir), "utf8")) as object;
    const list = JSON.parse((await runRalph(["list", "--json"], dir)).stdout) as unknown;
    const status = JSON.parse((await runRalph(["status", "--json", "j"], dir)).stdout) as Record<string, unknown>;
    assert.ok(ajv.validate(listSchema, list), ajv.errorsText());
    assert.ok(ajv.validate(statusSchema, status), ajv.errorsText());
    assert.equal(status.exit_reason, "MAX_ITERATIONS");
    const latest = JSON.parse((await runRalph(["status", "--json"], dir)).stdout) as Record<string, unknown>;
    assert.equal(latest.id, "j", "without RUN and with no active run, status shows the latest run");
    assert.equal(ajv.validate(statusSchema, { ...status, state: "bogus" }), false, "the schema rejects a bad state");
  });
});

describe("every ending says what to do next; no-op commands say so", () => {
  test("MAX_ITERATIONS names ralph continue -n; continue without RUN takes the latest; at the cap it refuses and changes nothing", async () => {
    const dir = project();
    const first = await runRalph(["run", "-n", "1", "go", ...fakeAgent()], dir);
    assert.equal(first.code, 3);
    const id = readdirSync(join(dir, ".ralph", "runs"))[0] as string;
    assert.match(first.stdout, new RegExp(`^next: give it more iterations: ralph continue ${id} -n 2$`, "m"));

    const eventsBefore = readFileSync(join(runDir(dir, id), "events.jsonl"), "utf8");
    const atCap = await runRalph(["continue"], dir);
    assert.equal(atCap.code, 2);
    assert.equal(
      atCap.stderr,
      `ralph: run ${id} has used 1 of its 1 iterations; nothing to continue. Raise the cap: ralph continue ${id} -n 2\n`,
    );
    assert.equal(readFileSync(join(runDir(dir, id), "events.jsonl"), "utf8"), eventsBefore, "nothing was started");

    const more = await runRalph(["continue", "-n", "2"], dir);
    assert.equal(more.code, 3, more.stderr);
    assert.match(more.stdout, /continuing after iteration 1; the next is iteration 2/);
    assert.match(more.stdout, /^── iteration 2\/2 ──$/m);
    assert.match(readFileSync(join(runDir(dir, id), "run.log"), "utf8"), / run continued after iteration 1$/m);
    assert.equal(readStatus(runDir(dir, id)).iteration, 2);
  });

  for (const command of ["pause", "resume", "stop"]) {
    test(`${command} on an ended run says it has ended, exits 2 and leaves no sentinel`, async () => {
      const dir = project();
      await runRalph(["run", "--name", "done-run", "-n", "1", "go", ...fakeAgent()], dir);
      const result = await runRalph([command, "done-run"], dir);
      assert.equal(result.code, 2);
      assert.equal(
        result.stderr,
        `ralph: run done-run has already ended (MAX_ITERATIONS); nothing to ${command}. Go on with it: ralph continue done-run\n`,
      );
      assert.deepEqual(
        readdirSync(runDir(dir, "done-run")).filter((name) => /^(STOP|PAUSE)/.test(name)),
        [],
      );
    });
  }
});

describe("pausing, said where it happens", () => {
  test("a paused run says how to resume; resume on a run that is not paused exits 2; status names the next step", async () => {
    const dir = project();
    const gate = join(dir, "gate");
    const started = startRalph(
      [
        "run",
        "--name",
        "p",
        "-n",
        "2",
        "--completion-promise",
        "DONE",
        "--check",
        "true",
        "go",
        ...fakeAgent("--wait-for", gate),
      ],
      dir,
    );
    try {
      await waitForFile(`${gate}.started`);
      const notPaused = await runRalph(["resume", "p"], dir);
      assert.deepEqual([notPaused.code, notPaused.stderr], [2, "ralph: run p is not paused; nothing to resume\n"]);
      assert.equal((await runRalph(["pause", "p"], dir)).code, 0);
      const twice = await runRalph(["pause", "p"], dir);
      assert.equal(twice.code, 2);
      writeFileSync(gate, "");
      await waitFor(() => readStatus(runDir(dir, "p")).state === "paused", "the run to pause");
      assert.match((await runRalph(["status", "p"], dir)).stdout, /^next {7}ralph resume p$/m);
      assert.equal((await runRalph(["resume", "p"], dir)).code, 0);
      const result = await started.done;
      assert.equal(result.code, 3, result.stderr);
      assert.match(result.stdout, /^paused: the run waits before its next iteration; go on with ralph resume p$/m);
      // The promise was never claimed, so the configured check did not run: the run says so.
      assert.match(
        result.stdout,
        /^\[1\/2\] [\d.]+s continue(?: · cpu [^\n]*)?\n {2}checks not run: they run once the promise is claimed$/m,
      );
      assert.match(
        (await runRalph(["status", "p"], dir)).stdout,
        /^next {7}give it more iterations: ralph continue p -n 4$/m,
      );
    } finally {
      started.child.kill("SIGKILL");
    }
  });
});
