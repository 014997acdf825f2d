// Questions that wait for a person: an agent's final <ask>, the needs_human state, `ralph answer`, and
// every way out of the wait (STOP, stop --now, SIGTERM, a SIGKILLed runner and `ralph continue`).
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Ajv2020 } from "ajv/dist/2020.js";
import {
  cleanEnv,
  completionMarker,
  fakeAgent,
  finishWithin,
  processAlive,
  readEvents,
  readStatus,
  runRalph,
  tempProjects,
  trackedStarts,
} from "../helpers/cli.js";
import { waitFor, waitForFile } from "../helpers/wait.js";

const project = tempProjects("ralph-ask-");
const start = trackedStarts();
const runDir = (dir: string, id: string) => join(dir, ".ralph", "runs", id);
const logOf = (dir: string, id: string) => readFileSync(join(runDir(dir, id), "run.log"), "utf8");
const typesOf = (dir: string, id: string) => readEvents(runDir(dir, id)).map((event) => event.type);
/** The prompts the fake agent recorded, one per iteration. */
const prompts = (file: string) => readFileSync(file, "utf8").split("\0").slice(0, -1);
const schema = (name: string) =>
  JSON.parse(readFileSync(new URL(`../../../schemas/${name}.schema.json`, import.meta.url), "utf8")) as object;

/** A run whose agent asks "Which database?" in iteration 1 and claims FIN from iteration 2. */
function askingRun(dir: string, id: string, ...extra: string[]) {
  const record = join(dir, `${id}.prompts`);
  const started = start(dir, [
    "run",
    "--name",
    id,
    "-n",
    "5",
    "--completion-promise",
    "FIN",
    ...extra,
    "build it",
    ...fakeAgent(
      "--record",
      record,
      "--ask",
      "Which database?",
      "--ask-in",
      "1",
      "--promise",
      "FIN",
      "--promise-from",
      "2",
    ),
  ]);
  return { ...started, record };
}

/** Until the run waits for an answer: status.json says so and the needs_human event is out (written just after). */
const waitForQuestion = (dir: string, id: string) =>
  waitFor(
    () =>
      existsSync(join(runDir(dir, id), "status.json")) &&
      readStatus(runDir(dir, id)).state === "needs_human" &&
      typesOf(dir, id).includes("needs_human"),
    `run ${id} to wait for an answer`,
  );

describe("questions", () => {
  test("an <ask> waits for a person; ralph answer resumes it and the next prompt carries the question and the answer", async () => {
    const dir = project();
    const run = askingRun(dir, "q");
    await waitForQuestion(dir, "q");
    assert.equal(readStatus(runDir(dir, "q")).question, "Which database?");
    assert.deepEqual(
      readEvents(runDir(dir, "q"))
        .filter((e) => e.type === "needs_human")
        .map((e) => [e.iteration, e.question]),
      [[1, "Which database?"]],
    );
    const list = JSON.parse((await runRalph(["list", "--json"], dir)).stdout) as {
      runs: Array<{ id: string; state: string; active: boolean; question: string | null }>;
    };
    assert.deepEqual(
      list.runs.map((r) => [r.id, r.state, r.active, r.question]),
      [["q", "needs_human", true, "Which database?"]],
    );
    const ajv = new Ajv2020({ strict: false });
    assert.ok(ajv.validate(schema("list"), list), ajv.errorsText());
    const status = await runRalph(["status", "q"], dir);
    assert.match(status.stdout, /^state {6}needs_human$/m);
    assert.match(status.stdout, /^question {3}Which database\?$/m);
    assert.match(status.stdout, /^next {7}ralph answer q "YOUR ANSWER"$/m);
    const statusJson = JSON.parse((await runRalph(["status", "--json"], dir)).stdout) as Record<string, unknown>;
    assert.equal(statusJson.question, "Which database?");
    assert.ok(ajv.validate(schema("status"), statusJson), ajv.errorsText());
    assert.equal(typesOf(dir, "q").filter((type) => type === "iteration_started").length, 1);

    const answered = await runRalph(["answer", "Postgres 16, with the schema in db/"], dir);
    assert.equal(answered.code, 0, answered.stderr);
    assert.match(answered.stdout, /run q took the answer and goes on/);
    const result = await finishWithin(run, 20_000);
    assert.equal(result.code, 0, result.stderr);
    assert.deepEqual(completionMarker(runDir(dir, "q")), ["completion_reason=DONE", "promise=COMPLETE"]);
    assert.match(
      result.stdout,
      /^the agent asks: Which database\?\nwaiting for your answer: ralph answer q "YOUR ANSWER" \(or --file F\)$/m,
    );
    const [first, second] = prompts(run.record);
    assert.equal(first, "build it");
    assert.equal(
      second,
      "build it\n\n## Your question and the answer\n\nYou asked: Which database?\n\nAnswer: Postgres 16, with the schema in db/\n",
    );
    const answeredEvent = readEvents(runDir(dir, "q")).find((e) => e.type === "answered");
    assert.deepEqual(
      [answeredEvent?.question, answeredEvent?.answer],
      ["Which database?", "Postgres 16, with the schema in db/"],
    );
    assert.equal(existsSync(join(runDir(dir, "q"), "ANSWER")), false);
    assert.equal(readStatus(runDir(dir, "q")).question, null);
  });

  test("ralph answer of a run that is not waiting is a usage error: exit 2, one line, nothing written", async () => {
    const dir = project();
    const gate = join(dir, "gate");
    const live = start(dir, ["run", "--name", "busy", "-n", "1", "go", ...fakeAgent("--wait-for", gate)]);
    await waitForFile(`${gate}.started`);
    const refused = await runRalph(["answer", "busy", "yes"], dir);
    assert.equal(refused.code, 2);
    assert.equal(refused.stderr, "ralph: run busy is not waiting for an answer (running); nothing to answer\n");
    assert.equal(existsSync(join(runDir(dir, "busy"), "ANSWER")), false);
    const agent = await runRalph(["answer", "busy", "yes"], dir, cleanEnv({ RALPH_RUN_DIR: runDir(dir, "busy") }));
    assert.equal(agent.code, 2);
    assert.match(agent.stderr, /^ralph: ralph answer is for people: it does not run inside the agent of a ralph run/);
    writeFileSync(gate, "");
    assert.equal((await finishWithin(live, 20_000)).code, 3);
    const ended = await runRalph(["answer", "yes"], dir);
    assert.equal(ended.code, 2);
    assert.match(
      ended.stderr,
      /^ralph: run busy is not waiting for an answer \(MAX_ITERATIONS\); nothing to answer\n$/,
    );
    for (const [args, message] of [
      [["answer", "busy", "  "], /^ralph: the answer is empty\n$/],
      [["answer", "busy", "--file", join(dir, "missing.txt")], /^ralph: --file .*missing\.txt: cannot be read/],
      [["answer", "nope", "yes"], /^ralph: RUN nope: no such run/],
      [["answer"], /^ralph: the answer is missing/],
    ] as const) {
      const bad = await runRalph([...args], dir);
      assert.equal(bad.code, 2, `${args.join(" ")}: ${bad.stderr}`);
      assert.match(bad.stderr, message);
      assert.equal(bad.stderr.trimEnd().split("\n").length, 1);
    }
    assert.equal(existsSync(join(runDir(dir, "busy"), "ANSWER")), false);
  });

  test("STOP while waiting ends the run STOPPED with the question open; answered later, continue carries the answer", async () => {
    const dir = project();
    const run = askingRun(dir, "s");
    await waitForQuestion(dir, "s");
    assert.equal((await runRalph(["stop", "s"], dir)).code, 0);
    const result = await finishWithin(run, 20_000);
    assert.equal(result.code, 0, result.stderr);
    assert.deepEqual(completionMarker(runDir(dir, "s")), ["completion_reason=STOPPED", "promise=COMPLETE"]);
    const list = JSON.parse((await runRalph(["list", "--json"], dir)).stdout) as {
      runs: Array<{ state: string; question: string | null }>;
    };
    assert.deepEqual(
      list.runs.map((r) => [r.state, r.question]),
      [["STOPPED", "Which database?"]],
    );
    const file = join(dir, "answer.txt");
    writeFileSync(file, "SQLite\n");
    const answered = await runRalph(["answer", "s", "--file", file], dir);
    assert.equal(answered.code, 0, answered.stderr);
    assert.match(answered.stdout, /its runner is not running: ralph continue s to go on/);
    const continued = await runRalph(["continue", "s"], dir);
    assert.equal(continued.code, 0, continued.stderr);
    assert.deepEqual(completionMarker(runDir(dir, "s")), ["completion_reason=DONE", "promise=COMPLETE"]);
    assert.match(prompts(run.record)[1] ?? "", /You asked: Which database\?\n\nAnswer: SQLite\n$/);
  });

  test("stop --now while waiting ends the run at once, STOPPED", async () => {
    const dir = project();
    const run = askingRun(dir, "n");
    await waitForQuestion(dir, "n");
    const stopped = await runRalph(["stop", "--now", "n"], dir);
    assert.equal(stopped.code, 0, stopped.stderr);
    assert.match(stopped.stdout, /run n: STOPPED/);
    assert.equal((await finishWithin(run, 20_000)).code, 0);
  });

  test("active: false in state.md while waiting ends the run STOPPED", async () => {
    const dir = project();
    const run = askingRun(dir, "a");
    await waitForQuestion(dir, "a");
    const stateFile = join(runDir(dir, "a"), "state.md");
    writeFileSync(stateFile, readFileSync(stateFile, "utf8").replace("active: true", "active: false"));
    assert.equal((await finishWithin(run, 20_000)).code, 0);
    assert.deepEqual(completionMarker(runDir(dir, "a")), ["completion_reason=STOPPED", "promise=COMPLETE"]);
  });

  test("SIGTERM while waiting ends the run INTERRUPTED, dying of the signal", async () => {
    const dir = project();
    const run = askingRun(dir, "t");
    await waitForQuestion(dir, "t");
    run.child.kill("SIGTERM");
    const result = await finishWithin(run, 20_000);
    assert.equal(result.signal, "SIGTERM", result.stderr);
    assert.deepEqual(completionMarker(runDir(dir, "t")), ["completion_reason=INTERRUPTED", "promise=COMPLETE"]);
    assert.equal(readStatus(runDir(dir, "t")).question, "Which database?");
  });

  test("a runner SIGKILLed while waiting: continue goes back to waiting with the same question; the answer then resumes it", async () => {
    const dir = project();
    const run = askingRun(dir, "k");
    await waitForQuestion(dir, "k");
    const pid = run.child.pid ?? 0;
    run.child.kill("SIGKILL");
    await finishWithin(run, 20_000);
    await waitFor(() => !processAlive(pid), "the runner to be gone");
    const stale = JSON.parse((await runRalph(["list", "--json"], dir)).stdout) as {
      runs: Array<{ state: string; question: string | null }>;
    };
    assert.deepEqual(
      stale.runs.map((r) => [r.state, r.question]),
      [["stale", "Which database?"]],
    );
    const again = start(dir, ["continue", "k"]);
    await waitFor(
      () =>
        readStatus(runDir(dir, "k")).pid === again.child.pid && readStatus(runDir(dir, "k")).state === "needs_human",
      "the continued run to wait again",
    );
    assert.equal(readStatus(runDir(dir, "k")).question, "Which database?");
    assert.deepEqual(
      readEvents(runDir(dir, "k"))
        .filter((e) => e.type === "needs_human")
        .map((e) => e.question),
      ["Which database?", "Which database?"],
    );
    assert.equal(typesOf(dir, "k").filter((type) => type === "iteration_started").length, 1);
    assert.equal((await runRalph(["answer", "k", "MySQL"], dir)).code, 0);
    const result = await finishWithin(again, 20_000);
    assert.equal(result.code, 0, result.stderr);
    assert.deepEqual(completionMarker(runDir(dir, "k")), ["completion_reason=DONE", "promise=COMPLETE"]);
    assert.deepEqual(
      prompts(run.record).map((prompt) => prompt.includes("Answer: MySQL")),
      [false, true],
    );
  });

  test("an answer taken at the iteration cap is kept: the run ends MAX_ITERATIONS and continue -n gives it to the next iteration", async () => {
    const dir = project();
    const record = join(dir, "prompts");
    const run = start(dir, [
      "run",
      "--name",
      "cap",
      "-n",
      "1",
      "go",
      ...fakeAgent("--record", record, "--ask", "Which database?", "--ask-in", "1"),
    ]);
    await waitForQuestion(dir, "cap");
    assert.equal((await runRalph(["answer", "cap", "Redis"], dir)).code, 0);
    const ended = await finishWithin(run, 20_000);
    assert.equal(ended.code, 3, ended.stderr);
    assert.deepEqual(
      [readStatus(runDir(dir, "cap")).question, readStatus(runDir(dir, "cap")).answer],
      ["Which database?", "Redis"],
    );
    const listed = JSON.parse((await runRalph(["list", "--json"], dir)).stdout) as {
      runs: Array<{ question: string | null }>;
    };
    assert.deepEqual(
      listed.runs.map((r) => r.question),
      [null],
      "an answered question is not open",
    );
    const continued = await runRalph(["continue", "cap", "-n", "2"], dir);
    assert.equal(continued.code, 3, continued.stderr);
    assert.deepEqual(
      prompts(record).map((prompt) => prompt.endsWith("You asked: Which database?\n\nAnswer: Redis\n")),
      [false, true],
    );
    assert.deepEqual([readStatus(runDir(dir, "cap")).question, readStatus(runDir(dir, "cap")).answer], [null, null]);
  });

  test("--on-ask continue (or RALPH_ON_ASK=continue) only logs the question and goes on", async () => {
    const dir = project();
    const flag = await runRalph(
      ["run", "--name", "c", "-n", "2", "--on-ask", "continue", "go", ...fakeAgent("--ask", "Which database?")],
      dir,
    );
    assert.equal(flag.code, 3, flag.stderr);
    const env = await runRalph(
      ["run", "--name", "e", "-n", "2", "go", ...fakeAgent("--ask", "Which database?")],
      dir,
      cleanEnv({ RALPH_ON_ASK: "continue" }),
    );
    assert.equal(env.code, 3, env.stderr);
    for (const id of ["c", "e"]) {
      assert.ok(!typesOf(dir, id).includes("needs_human"), id);
      assert.equal(
        logOf(dir, id).match(/the agent asked: "Which database\?" \(--on-ask continue: going on without an answer\)/g)
          ?.length,
        2,
        id,
      );
    }
    const bad = await runRalph(["run", "--on-ask", "maybe", "go", ...fakeAgent()], dir);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--on-ask/);
  });

  test("an <ask> that is quoted, code, negated, echoed from the prompt or not at the end does not wait", async () => {
    const dir = project();
    const cases: Array<[string, string[], string]> = [
      ["quoted", ["--print", 'I could write "<ask>Which database?</ask>"'], "inside quotes"],
      ["code", ["--print", "`<ask>Which database?</ask>`"], "inside Markdown code"],
      ["negated", ["--print", "I will not ask <ask>Which database?</ask>"], "negated"],
      ["echoed", ["--echo-prompt"], "echoed"],
      ["not-last", ["--print", "<ask>Which database?</ask>", "--print", "Going on with Postgres."], "goes on after"],
    ];
    for (const [id, args, why] of cases) {
      const result = await runRalph(
        [
          "run",
          "--name",
          id,
          "-n",
          "1",
          "Reply exactly: Here is my question <ask>Which database?</ask>",
          ...fakeAgent(...args),
        ],
        dir,
      );
      assert.equal(result.code, 3, `${id}: ${result.stderr}`);
      assert.ok(!typesOf(dir, id).includes("needs_human"), id);
      assert.match(
        logOf(dir, id),
        new RegExp(`an <ask> in the final message was not taken as a question: .*${why}`),
        id,
      );
    }
  });
});
