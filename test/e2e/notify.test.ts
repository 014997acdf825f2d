// Notifications through a real `ralph run`: webhooks on a local server, commands, ralph.yaml filters, Ctrl-C.
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Ajv2020 } from "ajv/dist/2020.js";
import {
  cleanEnv,
  fakeAgent,
  fakeClaudeEnv,
  finishWithin,
  readEvents,
  readStatus,
  runRalph,
  tempProjects,
  trackedStarts,
} from "../helpers/cli.js";
import { waitFor, waitForFile, within } from "../helpers/wait.js";
import { startReceiver, type Received } from "../fixtures/notify-harness.js";
import type { FakeHttpServer, RequestLog } from "../fixtures/fake-http.js";
import { identify } from "../fixtures/e2e-harness.js";
import { cleanupAfterTests } from "../fixtures/e2e-cleanup.js";
import { inTerminal } from "../fixtures/terminal.js";

const project = tempProjects("ralph-notify-e2e-");
const cleanup = cleanupAfterTests();
const start = trackedStarts();
const runDir = (dir: string) => join(dir, ".ralph", "runs", "c");
const schema = JSON.parse(
  readFileSync(new URL("../../../schemas/event.schema.json", import.meta.url), "utf8"),
) as object;
const validate = new Ajv2020({ strict: false }).compile(schema);

const receivers: FakeHttpServer[] = [];
after(async () => {
  for (const receiver of receivers) await receiver.close();
});

async function receiver(
  answer: (index: number) => number | null,
): Promise<FakeHttpServer & { log: RequestLog<Received> }> {
  const started = await startReceiver(answer);
  receivers.push(started);
  return started;
}

const bodies = (log: RequestLog<Received>) =>
  log.requests.map((request) => JSON.parse(request.body) as Record<string, unknown>);
const typesOf = (log: RequestLog<Received>) => bodies(log).map((body) => body.type);

function assertSchema(events: Array<Record<string, unknown>>): void {
  for (const event of events) assert.ok(validate(event), `${String(event.type)}: ${JSON.stringify(validate.errors)}`);
}

describe("notifications from a run", () => {
  test("a webhook hears the default events (waiting_limit, run_ended) as the JSON lines of events.jsonl, nothing else", async () => {
    const dir = project();
    const hook = await receiver(() => 200);
    const env = fakeClaudeEnv(dir, "--limit-once", join(dir, "limited"), "1");
    const result = await runRalph(["run", "--name", "c", "-n", "1", "--webhook", `${hook.base}/hook`, "go"], dir, env);
    assert.equal(result.code, 3, result.stderr);
    assert.deepEqual(typesOf(hook.log), ["waiting_limit", "run_ended"]);
    assert.ok(
      hook.log.requests.every((request) => request.method === "POST" && request.contentType === "application/json"),
    );
    const recorded = readEvents(runDir(dir));
    const sent = bodies(hook.log);
    assert.deepEqual(
      sent[1],
      recorded.find((event) => event.type === "run_ended"),
    );
    assert.equal(sent[1]?.reason, "MAX_ITERATIONS");
    assertSchema(recorded);
    assert.equal(recorded.filter((event) => event.type === "notification_failed").length, 0);
  });

  test("an agent's question reaches the default targets as needs_human while the run waits; the answer lets it end", async () => {
    const dir = project();
    const hook = await receiver(() => 200);
    const agent = fakeAgent("--ask", "Which database?", "--ask-in", "1", "--promise", "FIN", "--promise-from", "2");
    const run = start(dir, [
      "run",
      "--name",
      "c",
      "-n",
      "3",
      "--completion-promise",
      "FIN",
      "--webhook",
      `${hook.base}/hook`,
      "go",
      ...agent,
    ]);
    await waitFor(() => typesOf(hook.log).includes("needs_human"), "the needs_human notification");
    assert.equal(readStatus(runDir(dir)).state, "needs_human", "delivered while the run waits for its answer");
    const question = bodies(hook.log).find((body) => body.type === "needs_human");
    assert.deepEqual([question?.iteration, question?.question], [1, "Which database?"]);
    const answered = await runRalph(["answer", "c", "Postgres"], dir);
    assert.equal(answered.code, 0, answered.stderr);
    const result = await finishWithin(run, 20_000);
    assert.equal(result.code, 0, result.stderr);
    assert.deepEqual(typesOf(hook.log), ["needs_human", "run_ended"]);
  });

  test("a 503 is retried and the second try delivers; nothing is recorded as failed", async () => {
    const dir = project();
    const hook = await receiver((index) => (index === 0 ? 503 : 200));
    const result = await runRalph(
      ["run", "--name", "c", "-n", "1", "--webhook", `${hook.base}/hook`, "go", ...fakeAgent()],
      dir,
    );
    assert.equal(result.code, 3, result.stderr);
    assert.deepEqual(typesOf(hook.log), ["run_ended", "run_ended"]);
    assert.equal(readEvents(runDir(dir)).filter((event) => event.type === "notification_failed").length, 0);
  });

  test("a server that never answers: the loop goes on, the exit waits for the drain then abandons, the failure is recorded with its secrets hidden", async () => {
    const dir = project();
    const hook = await receiver(() => null);
    const secretPath = "Zq8xW3vK9pL2mN7rT4yB";
    const url = `${hook.base.replace("http://", "http://bot:hunter2pass@")}/hooks/${secretPath}?token=s3cr3t-value&channel=ci`;
    writeFileSync(
      join(dir, "ralph.yaml"),
      `notify:\n  - webhook: "${url}"\n    events: [iteration_started, run_ended]\n`,
    );
    // The server holds every request open until the test ends: ralph exiting at all means it did not wait for it.
    const result = await runRalph(["run", "--name", "c", "-n", "3", "go", ...fakeAgent()], dir, cleanEnv(), 30_000);
    assert.equal(result.code, 3, result.stderr);
    assert.ok(hook.log.requests.length >= 4, `${hook.log.requests.length} requests reached the server`);
    const events = readEvents(runDir(dir));
    const types = events.map((event) => event.type);
    const failed = events.filter((event) => event.type === "notification_failed");
    assert.deepEqual(failed.map((event) => event.event).sort(), [
      "iteration_started",
      "iteration_started",
      "iteration_started",
      "run_ended",
    ]);
    // The loop went on without them: every failure is recorded after run_ended, and each was abandoned at the exit
    // (a delivery the loop had waited for would have ended by its own tries, without "abandoned").
    assert.ok(types.indexOf("notification_failed") > types.indexOf("run_ended"), types.join(" "));
    for (const failure of failed) assert.match(String(failure.error), /abandoned: the run was exiting/);
    // The exit first waited its drain (5 s by ralph's own clock) for them; how little more it waits is the bench's.
    const at = (event: Record<string, unknown> | undefined) => Date.parse(String(event?.ts));
    const drainedMs =
      at(failed.find((event) => event.event === "run_ended")) - at(events.find((event) => event.type === "run_ended"));
    assert.ok(drainedMs >= 4990, `abandoned ${drainedMs} ms after run_ended`);
    assert.match(
      String(failed[0]?.target),
      /^webhook http:\/\/\[REDACTED\]@127\.0\.0\.1:\d+\/hooks\/\[REDACTED\]\?token=\[REDACTED\]&channel=ci$/,
    );
    assertSchema(events);
    const written = ["events.jsonl", "run.log", "status.json", "progress.txt"]
      .map((file) => readFileSync(join(runDir(dir), file), "utf8"))
      .join("\n");
    assert.match(written, /notification failed: webhook/);
    assert.match(
      result.stdout,
      /^notifications: webhook http:\/\/\[REDACTED\]@127\.0\.0\.1:\d+\/hooks\/\[REDACTED\]\?token=\[REDACTED\]&channel=ci \(iteration_started, run_ended\)$/m,
    );
    for (const secret of ["hunter2pass", secretPath, "s3cr3t-value"]) {
      assert.ok(!written.includes(secret), `${secret} leaked into the run's files`);
      assert.ok(!(result.stdout + result.stderr).includes(secret), `${secret} leaked into the output`);
    }
  });

  test("a --notify command gets the event JSON on its stdin", async () => {
    const dir = project();
    const out = join(dir, "notified.json");
    const command = `${process.execPath} -e "require('fs').writeFileSync(process.argv[1], require('fs').readFileSync(0))" ${out}`;
    const result = await runRalph(["run", "--name", "c", "-n", "1", "--notify", command, "go", ...fakeAgent()], dir);
    assert.equal(result.code, 3, result.stderr);
    const received = JSON.parse(readFileSync(out, "utf8")) as Record<string, unknown>;
    assert.deepEqual(
      received,
      readEvents(runDir(dir)).find((event) => event.type === "run_ended"),
    );
  });

  test("ralph.yaml events: filters choose what each target hears; stalled is a STALLED run_ended", async () => {
    const dir = project();
    const started = await receiver(() => 200);
    const stalled = await receiver(() => 200);
    const yaml = `notify:\n  - webhook: ${started.base}/a\n    events: [iteration_started]\n  - webhook: ${stalled.base}/b\n    events: [stalled]\n`;
    writeFileSync(join(dir, "ralph.yaml"), yaml);
    const ended = await runRalph(["run", "--name", "c", "-n", "2", "go", ...fakeAgent()], dir);
    assert.equal(ended.code, 3, ended.stderr);
    assert.deepEqual(typesOf(started.log), ["iteration_started", "iteration_started"]);
    assert.deepEqual(typesOf(stalled.log), [], "a MAX_ITERATIONS ending is not `stalled`");

    const git = project();
    for (const args of [
      ["init", "-q"],
      ["-c", "user.email=t@example.invalid", "-c", "user.name=T", "commit", "-q", "--allow-empty", "-m", "init"],
    ]) {
      execFileSync("git", args, { cwd: git });
    }
    writeFileSync(join(git, "ralph.yaml"), yaml);
    const stall = await runRalph(["run", "--name", "c", "-n", "5", "--stall-limit", "1", "go", ...fakeAgent()], git);
    assert.equal(stall.code, 1, stall.stderr);
    assert.deepEqual(
      bodies(stalled.log).map((body) => [body.type, body.reason]),
      [["run_ended", "STALLED"]],
    );
  });

  test("ralph continue sends to the targets the run was started with", async () => {
    const dir = project();
    const hook = await receiver(() => 200);
    const first = await runRalph(
      ["run", "--name", "c", "-n", "1", "--webhook", `${hook.base}/hook`, "go", ...fakeAgent()],
      dir,
    );
    assert.equal(first.code, 3, first.stderr);
    const again = await runRalph(["continue", "c", "-n", "2"], dir);
    assert.equal(again.code, 3, again.stderr);
    assert.deepEqual(
      bodies(hook.log).map((body) => [body.type, body.reason]),
      [
        ["run_ended", "MAX_ITERATIONS"],
        ["run_ended", "MAX_ITERATIONS"],
      ],
    );
  });

  test("bad notification settings are usage errors naming the input", async () => {
    const dir = project();
    for (const [args, pattern] of [
      [["--webhook", "ftp://example.org/x"], /^--webhook: expected an http\(s\) URL/],
      [["--webhook-format", "xml", "--webhook", "http://127.0.0.1:9/x"], /^--webhook-format: expected json or slack/],
      [["--notify", "'unbalanced"], /^--notify: /],
    ] as const) {
      const result = await runRalph(["run", "--name", "c", ...args, "go", ...fakeAgent()], dir);
      assert.equal(result.code, 2, result.stderr);
      assert.match(result.stderr.replace(/^ralph: (error: )?/, ""), pattern);
    }
    writeFileSync(join(dir, "ralph.yaml"), "notify:\n  - webhook: http://127.0.0.1:9/x\n    events: [everything]\n");
    const result = await runRalph(["run", "--name", "c", "go", ...fakeAgent()], dir);
    assert.equal(result.code, 2, result.stderr);
    assert.match(result.stderr, /ralph\.yaml: line 1: notify\[0\]\.events/);
  });
});

describe("notifications and Ctrl-C", () => {
  test("Ctrl-C while the last notification is on its way: the run keeps its ending, ralph dies of SIGINT within ~1 s", async () => {
    const { dir } = cleanup.project();
    const hook = await receiver(() => null);
    writeFileSync(join(dir, "ralph.yaml"), `notify:\n  - webhook: ${hook.base}/hook\n`);
    const terminal = inTerminal(dir, ["run", "--name", "c", "-n", "1", "go", ...fakeAgent()]);
    cleanup.pid(identify(terminal.pty.pid));
    await hook.log.waitForRequest((request) => request.body.includes('"run_ended"'), 15_000);
    const pressed = performance.now();
    terminal.pty.write("\x03");
    const exit = await within(terminal.exited, 15_000, "the terminal's shell to exit");
    assert.equal(exit.signal, 2, terminal.output());
    assert.doesNotMatch(terminal.output(), /AFTER/);
    assert.ok(
      exit.at - pressed < 4000,
      `exited ${Math.round(exit.at - pressed)} ms after Ctrl-C (the drain alone would take 5 s)`,
    );
    assert.equal(readStatus(runDir(dir)).exit_reason, "MAX_ITERATIONS");
  });

  /** Runs ralph on a terminal until its agent and (with a receiver) a hanging delivery are under way, types Ctrl-C, and times the exit. */
  async function ctrlC(
    hook: (FakeHttpServer & { log: RequestLog<Received> }) | null,
  ): Promise<{ tookMs: number; signal: number | undefined; runDir: string; output: string }> {
    const { dir } = cleanup.project();
    if (hook)
      writeFileSync(
        join(dir, "ralph.yaml"),
        `notify:\n  - webhook: ${hook.base}/hook\n    events: [iteration_started, run_ended]\n`,
      );
    const ready = join(dir, "agent-started");
    const terminal = inTerminal(dir, [
      "run",
      "--name",
      "c",
      "-n",
      "0",
      "--grace",
      "2s",
      "go",
      ...fakeAgent("--wait-for", ready),
    ]);
    cleanup.pid(identify(terminal.pty.pid));
    await waitForFile(`${ready}.started`);
    if (hook) await hook.log.waitForRequest((request) => request.body.includes('"iteration_started"'), 10_000);
    const pressed = performance.now();
    terminal.pty.write("\x03");
    const exit = await within(terminal.exited, 15_000, "the terminal's shell to exit");
    return { tookMs: exit.at - pressed, signal: exit.signal, runDir: runDir(dir), output: terminal.output() };
  }

  test("Ctrl-C while a delivery hangs: ralph dies of SIGINT at most ~1 s later than without notifications", async () => {
    const without = await ctrlC(null);
    const hanging = await ctrlC(await receiver(() => null));
    assert.equal(without.signal, 2, without.output);
    assert.equal(hanging.signal, 2, hanging.output);
    // The hanging run_ended delivery is given 1 s after a signal, not 5 (slack for two ends timed apart on a loaded machine).
    const extra = hanging.tookMs - without.tookMs;
    assert.ok(
      extra < 3000,
      `exited ${Math.round(hanging.tookMs)} ms after Ctrl-C, ${Math.round(without.tookMs)} ms without notifications`,
    );
    const events = readEvents(hanging.runDir);
    assert.equal(events.find((event) => event.type === "run_ended")?.reason, "INTERRUPTED");
    assert.ok(events.some((event) => event.type === "notification_failed" && event.event === "run_ended"));
  });
});
