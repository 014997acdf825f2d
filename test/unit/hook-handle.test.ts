// `ralph hook handle` over a table of hook inputs and state files.
import { after, describe, mock, test } from "node:test";
import fs from "node:fs";
import { syncBuiltinESMExports } from "node:module";
import assert from "node:assert/strict";
import {
  appendFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { handleStop, type HandleDeps, type StopDecision } from "../../src/hook/handle-stop.js";
import { hookFiles } from "../../src/hook/hook-files.js";
import { trustedLoopCopy } from "../../src/hook/loop-trust.js";
import { parseStopHookInput, type StopHookInput } from "../../src/hook/hook-input.js";
import { patchHookLoop, readHookLoop } from "../../src/hook/hook-loop-file.js";
import { startHookLoop, type HookStartRequest } from "../../src/hook/start-loop.js";
import { listRuns } from "../../src/control/list-runs.js";
import { runPaths } from "../../src/store/run-paths.js";
import { appendCall, projectKey } from "../../src/spend/spend-ledger.js";
import type { SpendCall } from "../../src/spend/spend-record.js";

const root = mkdtempSync(join(tmpdir(), "ralph-hook-handle-"));
after(() => rmSync(root, { recursive: true, force: true }));
let count = 0;

function project(): string {
  count += 1;
  const dir = join(root, `p${count}`);
  mkdirSync(dir);
  return dir;
}

function deps(projectDir: string, extra: NodeJS.ProcessEnv = {}): HandleDeps {
  // The spend ledger goes to the tests' state directory (scripts/run-tests.mjs), never the user's.
  const env = { XDG_STATE_HOME: process.env.XDG_STATE_HOME, ...extra };
  return {
    projectDir,
    env,
    now: () => new Date(),
    pid: process.pid,
    hostname: "test-host",
    transcriptRetry: { attempts: 1, delayMs: 0 },
  };
}

function input(fields: Partial<StopHookInput> = {}): StopHookInput {
  return {
    sessionId: "session-A",
    transcriptPath: null,
    cwd: null,
    stopHookActive: false,
    lastAssistantMessage: "Still working.",
    ...fields,
  };
}

async function start(dir: string, request: Partial<HookStartRequest> = {}): Promise<string> {
  const started = await startHookLoop(
    dir,
    {
      prompt: "Make the tests pass.",
      maxIterations: 5,
      completionPromise: "DONE",
      criteria: [],
      sessionId: null,
      ...request,
    },
    { now: () => new Date(), pid: process.pid, hostname: "test-host" },
  );
  assert.ok(started.ok, started.ok ? "" : started.message);
  return started.runId;
}

function state(dir: string) {
  const read = readHookLoop(hookFiles(dir).loop);
  assert.equal(read.kind, "ok");
  return read.kind === "ok" ? read.loop : assert.fail("unreachable");
}

function marker(dir: string, runId: string): string[] {
  return readFileSync(runPaths(dir, runId).progress, "utf8").trimEnd().split("\n").slice(-2);
}

function events(dir: string, runId: string): Array<Record<string, unknown>> {
  return readFileSync(runPaths(dir, runId).events, "utf8")
    .trimEnd()
    .split("\n")
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** A call of another run of the project in `dir`, ended now, that cost `usd`. */
function spendCall(dir: string, usd: number): SpendCall {
  const tokens = { input: 0, output: 0, cache_read: 0, cache_write: 0 };
  return {
    v: 1,
    kind: "call",
    at: new Date().toISOString(),
    project: projectKey(dir),
    run: "other",
    parent: null,
    family: "other",
    role: "iteration",
    iteration: 1,
    agent: "claude",
    model: null,
    cost_usd: usd,
    cost_source: "reported",
    tokens,
    duration_ms: 1,
  };
}

function assertBlock(decision: StopDecision): asserts decision is Extract<StopDecision, { kind: "block" }> {
  assert.equal(decision.kind, "block", JSON.stringify(decision));
}

describe("hook handle", () => {
  test("no state file: the stop is allowed and nothing is created", async () => {
    const dir = project();
    assert.deepEqual(await handleStop(input(), deps(dir)), { kind: "allow", message: null });
    assert.deepEqual(readdirSync(dir), []);
  });

  test("no promise in the last message: iteration + 1, block with the prompt and an iteration message", async () => {
    const dir = project();
    const runId = await start(dir);
    const decision = await handleStop(input(), deps(dir));
    assertBlock(decision);
    assert.equal(decision.reason, "Make the tests pass.");
    assert.match(decision.systemMessage, /^ralph iteration 2\/5 · run /);
    assert.match(
      decision.systemMessage,
      / · Claude Code labels this "Stop hook error": it is the loop going on, not a failure$/,
    );
    assert.match(decision.systemMessage, /<promise>DONE<\/promise>/);
    assert.equal(state(dir).iteration, 2);
    assert.equal(state(dir).active, true);
    const ended = events(dir, runId).find((event) => event.type === "iteration_ended");
    assert.equal(ended?.iteration, 1);
    assert.equal(ended?.result, "continue");
    assert.equal(ended?.promise, "absent");
    assert.match(readFileSync(runPaths(dir, runId).progress, "utf8"), /^iteration=1$/m);
    assert.equal(JSON.parse(readFileSync(runPaths(dir, runId).status, "utf8")).iteration, 2);
  });

  test("the promise in the last message ends the loop DONE: marker, active: false, file kept", async () => {
    const dir = project();
    const runId = await start(dir);
    assertBlock(await handleStop(input(), deps(dir)));
    const decision = await handleStop(
      input({ stopHookActive: true, lastAssistantMessage: "All green.\n<promise>DONE</promise>" }),
      deps(dir),
    );
    assert.equal(decision.kind, "allow");
    assert.match(decision.kind === "allow" ? (decision.message ?? "") : "", /loop done after 2 iterations/);
    assert.deepEqual(marker(dir, runId), ["completion_reason=DONE", "promise=COMPLETE"]);
    assert.equal(state(dir).active, false);
    assert.equal(state(dir).iteration, 2);
    assert.equal(state(dir).prompt, "Make the tests pass.\n");
    // A later stop of the same session is let through without recording anything again.
    assert.deepEqual(await handleStop(input(), deps(dir)), { kind: "allow", message: null });
    assert.deepEqual(marker(dir, runId), ["completion_reason=DONE", "promise=COMPLETE"]);
  });

  for (const [name, message] of [
    ["negated", "I will not output <promise>DONE</promise> until the tests pass."],
    ["quoted", 'The prompt says to print "<promise>DONE</promise>" at the end.'],
    ["bare phrase", "DONE with the first half."],
  ] as const) {
    test(`a ${name} promise does not end the loop`, async () => {
      const dir = project();
      await start(dir);
      assertBlock(await handleStop(input({ lastAssistantMessage: message }), deps(dir)));
      assert.equal(state(dir).iteration, 2);
    });
  }

  test("inactive state file: the stop is allowed and the run is recorded STOPPED", async () => {
    const dir = project();
    const runId = await start(dir);
    patchHookLoop(hookFiles(dir).loop, { active: false });
    const decision = await handleStop(input(), deps(dir));
    assert.equal(decision.kind, "allow");
    assert.match(decision.kind === "allow" ? (decision.message ?? "") : "", /stopped at iteration 1/);
    assert.deepEqual(marker(dir, runId), ["completion_reason=STOPPED", "promise=COMPLETE"]);
    assert.ok(existsSync(hookFiles(dir).loop), "the state file is kept");
  });

  test("an unbound loop is bound to the first session to stop; other sessions are never blocked", async () => {
    const dir = project();
    await start(dir);
    assertBlock(await handleStop(input({ sessionId: "session-A" }), deps(dir)));
    assert.equal(state(dir).sessionId, "session-A");
    assert.deepEqual(await handleStop(input({ sessionId: "session-B" }), deps(dir)), { kind: "allow", message: null });
    assert.deepEqual(await handleStop(input({ sessionId: null }), deps(dir)), { kind: "allow", message: null });
    assert.equal(state(dir).iteration, 2, "another session's stop changes nothing");
    assertBlock(await handleStop(input({ sessionId: "session-A", stopHookActive: true }), deps(dir)));
    assert.equal(state(dir).iteration, 3);
  });

  test("a stop without a session id (empty, blank or missing) never binds an unbound loop nor is blocked; the next session's stop then owns it", async () => {
    const dir = project();
    await start(dir);
    for (const text of ['{"session_id":""}', '{"session_id":"   "}', "{}"]) {
      const parsed = parseStopHookInput(text);
      assert.ok(parsed.ok);
      assert.equal(parsed.ok && parsed.input.sessionId, null, text);
      const decision = await handleStop(
        parsed.ok ? { ...parsed.input, lastAssistantMessage: "Still working." } : input(),
        deps(dir),
      );
      assert.equal(decision.kind, "allow", text);
      assert.equal(state(dir).sessionId, "", `${text} left the loop unbound`);
      assert.equal(state(dir).iteration, 1, `${text} changed nothing`);
    }
    assertBlock(await handleStop(input({ sessionId: "session-A" }), deps(dir)));
    assert.equal(state(dir).sessionId, "session-A");
    assert.deepEqual(
      await handleStop(input({ sessionId: "session-B" }), deps(dir)),
      { kind: "allow", message: null },
      "exactly one owner",
    );
  });

  test("a loop bound at start (from inside a session) ignores other sessions from the first stop", async () => {
    const dir = project();
    const runId = await start(dir, { sessionId: "session-X" });
    assert.deepEqual(
      await handleStop(input({ sessionId: "session-A", lastAssistantMessage: "<promise>DONE</promise>" }), deps(dir)),
      { kind: "allow", message: null },
    );
    assert.equal(state(dir).active, true);
    assert.equal(existsSync(join(runPaths(dir, runId).dir, "hook-turn.json")), false);
  });

  test("max_iterations reached: MAX_ITERATIONS, after exactly max iterations", async () => {
    const dir = project();
    const runId = await start(dir, { maxIterations: 3 });
    assertBlock(await handleStop(input(), deps(dir)));
    assertBlock(await handleStop(input({ stopHookActive: true }), deps(dir)));
    const decision = await handleStop(input({ stopHookActive: true }), deps(dir));
    assert.equal(decision.kind, "allow");
    assert.match(
      decision.kind === "allow" ? (decision.message ?? "") : "",
      /stopped after 3 iterations: max_iterations reached/,
    );
    assert.deepEqual(marker(dir, runId), ["completion_reason=MAX_ITERATIONS", "promise=COMPLETE"]);
    assert.equal(state(dir).active, false);
    assert.deepEqual(
      events(dir, runId)
        .filter((e) => e.type === "iteration_ended")
        .map((e) => e.result),
      ["continue", "continue", "max_iterations"],
    );
  });

  test("promise claimed but a criterion fails: the loop goes on and the next prompt carries the check's output", async () => {
    const dir = project();
    const runId = await start(dir, { criteria: [{ type: "command", check: "echo 3 tests failing; exit 1" }] });
    const decision = await handleStop(input({ lastAssistantMessage: "<promise>DONE</promise>" }), deps(dir));
    assertBlock(decision);
    assert.match(decision.reason, /^Make the tests pass\.\n/);
    assert.match(decision.reason, /checks failed:[\s\S]*echo 3 tests failing; exit 1[\s\S]*3 tests failing/);
    assert.match(decision.systemMessage, /completion checks failed/);
    assert.equal(state(dir).active, true);
    assert.ok(events(dir, runId).some((e) => e.type === "criteria_checked" && e.passed === false));
  });

  test("criteria without a promise: checked at every stop, DONE once they pass", async () => {
    const dir = project();
    const runId = await start(dir, { completionPromise: null, criteria: [{ type: "file_exists", check: "done.txt" }] });
    assertBlock(await handleStop(input(), deps(dir)));
    writeFileSync(join(dir, "done.txt"), "x");
    assert.equal((await handleStop(input({ stopHookActive: true }), deps(dir))).kind, "allow");
    assert.deepEqual(marker(dir, runId), ["completion_reason=DONE", "promise=COMPLETE"]);
  });

  test("the agent's loosening edit of the loop file (drop the failing check, max_iterations 0) is refused at the next stop, in one line; the loop goes on with its rules", async () => {
    const dir = project();
    const loopFile = hookFiles(dir).loop;
    const runId = await start(dir, { maxIterations: 5, criteria: [{ type: "command", check: "exit 1" }] });
    assertBlock(await handleStop(input(), deps(dir)));
    // What the session's agent writes: no check, no cap.
    const loosened = readFileSync(loopFile, "utf8")
      .replace(/^max_iterations: 5$/m, "max_iterations: 0")
      .replace(/^completion_criteria:[\s\S]*?(?=^started_at:)/m, "completion_criteria: []\n");
    assert.notEqual(loosened, readFileSync(loopFile, "utf8"));
    writeFileSync(loopFile, loosened);
    const decision = await handleStop(
      input({ stopHookActive: true, lastAssistantMessage: "<promise>DONE</promise>" }),
      deps(dir),
    );
    assertBlock(decision);
    const [first] = decision.systemMessage.split("\n");
    assert.equal(
      first,
      "ralph: an edit to ralph-loop.local.md made during the session was refused (max_iterations 5 -> 0, completion_criteria): it would loosen the loop, which goes on with its rules; change them with ralph hook start",
    );
    assert.match(decision.reason, /checks failed/);
    assert.equal(state(dir).maxIterations, 5);
    assert.deepEqual(state(dir).completionCriteria, [{ type: "command", check: "exit 1" }]);
    assert.equal(
      events(dir, runId).some((e) => e.type === "run_ended"),
      false,
    );
    // A tightening made the same way is applied: a lower cap, an added check.
    const tightened = readFileSync(loopFile, "utf8").replace(/^max_iterations: 5$/m, "max_iterations: 4");
    writeFileSync(loopFile, tightened);
    assertBlock(await handleStop(input({ stopHookActive: true }), deps(dir)));
    assert.equal(state(dir).maxIterations, 4);
  });

  test("control: without ralph's copy of the loop file (the unguarded file), the same loosening edit ends the loop DONE", async () => {
    const dir = project();
    const loopFile = hookFiles(dir).loop;
    await start(dir, { maxIterations: 5, criteria: [{ type: "command", check: "exit 1" }] });
    assertBlock(await handleStop(input(), deps(dir)));
    const loosened = readFileSync(loopFile, "utf8")
      .replace(/^max_iterations: 5$/m, "max_iterations: 0")
      .replace(/^completion_criteria:[\s\S]*?(?=^started_at:)/m, "completion_criteria: []\n");
    writeFileSync(loopFile, loosened);
    rmSync(trustedLoopCopy(loopFile), { force: true });
    const decision = await handleStop(
      input({ stopHookActive: true, lastAssistantMessage: "<promise>DONE</promise>" }),
      deps(dir),
    );
    assert.equal(decision.kind, "allow");
    assert.match(decision.kind === "allow" ? (decision.message ?? "") : "", /DONE/);
  });

  test("the agent's edit of session_id (to pass as another session's loop) is refused at the next stop; the loop goes on", async () => {
    const dir = project();
    const loopFile = hookFiles(dir).loop;
    const runId = await start(dir, { maxIterations: 5, criteria: [{ type: "command", check: "exit 1" }] });
    assertBlock(await handleStop(input(), deps(dir)));
    writeFileSync(loopFile, readFileSync(loopFile, "utf8").replace(/^session_id: .*$/m, "session_id: x"));
    assert.equal(state(dir).sessionId, "x");
    const decision = await handleStop(input({ stopHookActive: true }), deps(dir));
    assertBlock(decision);
    assert.match(
      decision.systemMessage.split("\n")[0] ?? "",
      /^ralph: an edit to ralph-loop\.local\.md made during the session was refused \(session_id\/run_id\/started_at\)/,
    );
    assert.equal(state(dir).sessionId, "session-A");
    assert.equal(state(dir).iteration, 3);
    assert.equal(
      events(dir, runId).some((e) => e.type === "run_ended"),
      false,
    );
  });

  test("control: without ralph's copy of the loop file, the same session_id edit lets every stop through, with no note", async () => {
    const dir = project();
    const loopFile = hookFiles(dir).loop;
    await start(dir, { maxIterations: 5, criteria: [{ type: "command", check: "exit 1" }] });
    assertBlock(await handleStop(input(), deps(dir)));
    writeFileSync(loopFile, readFileSync(loopFile, "utf8").replace(/^session_id: .*$/m, "session_id: x"));
    rmSync(trustedLoopCopy(loopFile), { force: true });
    assert.deepEqual(await handleStop(input({ stopHookActive: true }), deps(dir)), { kind: "allow", message: null });
    assert.equal(state(dir).sessionId, "x");
  });

  /**
   * Has a process of the agent's replace the loop file just after ralph writes `iteration: 2` to it (in the gap
   * before ralph records it). `copyFromFile` (the control) makes ralph's record of that write a copy of the file
   * as found then, as trusting the file did.
   */
  function raceAfterNextWrite(loopFile: string, write: () => void, copyFromFile = false): void {
    const rename = fs.renameSync;
    let raced = false;
    const spy = mock.method(fs, "renameSync", (from: fs.PathLike, to: fs.PathLike) => {
      rename(from, to);
      if (raced && String(to) === trustedLoopCopy(loopFile)) {
        fs.copyFileSync(loopFile, trustedLoopCopy(loopFile));
        spy.mock.restore();
        syncBuiltinESMExports();
      }
      if (raced || String(to) !== loopFile || !/^iteration: 2$/m.test(readFileSync(loopFile, "utf8"))) return;
      raced = true;
      write();
      if (copyFromFile) return;
      spy.mock.restore();
      syncBuiltinESMExports();
    });
    syncBuiltinESMExports();
  }

  const loosen = (text: string): string =>
    text
      .replace(/^max_iterations: 5$/m, "max_iterations: 0")
      .replace(/^completion_criteria:[\s\S]*?(?=^started_at:)/m, "completion_criteria: []\n");

  test("a loosening written by the agent's background process just after ralph writes the loop file is not trusted: the next stop refuses it", async () => {
    const dir = project();
    const loopFile = hookFiles(dir).loop;
    await start(dir, { maxIterations: 5, criteria: [{ type: "command", check: "exit 1" }] });
    raceAfterNextWrite(loopFile, () => writeFileSync(loopFile, loosen(readFileSync(loopFile, "utf8"))));
    assertBlock(await handleStop(input(), deps(dir)));
    assert.equal(state(dir).maxIterations, 0, "the race did not happen");
    const decision = await handleStop(
      input({ stopHookActive: true, lastAssistantMessage: "<promise>DONE</promise>" }),
      deps(dir),
    );
    assertBlock(decision);
    assert.match(
      decision.systemMessage,
      /^ralph: an edit to ralph-loop\.local\.md made during the session was refused \(max_iterations 5 -> 0, completion_criteria\)/,
    );
    assert.equal(state(dir).maxIterations, 5);
  });

  test("control: when the copy is taken from the file after ralph's write (the race won), the same loosening ends the loop DONE", async () => {
    const dir = project();
    const loopFile = hookFiles(dir).loop;
    await start(dir, { maxIterations: 5, criteria: [{ type: "command", check: "exit 1" }] });
    raceAfterNextWrite(loopFile, () => writeFileSync(loopFile, loosen(readFileSync(loopFile, "utf8"))), true);
    assertBlock(await handleStop(input(), deps(dir)));
    const decision = await handleStop(
      input({ stopHookActive: true, lastAssistantMessage: "<promise>DONE</promise>" }),
      deps(dir),
    );
    assert.equal(decision.kind, "allow");
    assert.match(decision.kind === "allow" ? (decision.message ?? "") : "", /DONE/);
  });

  test("a corrupt state file ends the loop FAILED with a clear message, once", async () => {
    const dir = project();
    const runId = await start(dir);
    const file = hookFiles(dir).loop;
    writeFileSync(file, readFileSync(file, "utf8").replace(/^iteration: 1$/m, "iteration: [oops"));
    const decision = await handleStop(input(), deps(dir));
    assert.equal(decision.kind, "allow");
    assert.match(
      decision.kind === "allow" ? (decision.message ?? "") : "",
      /ralph-loop\.local\.md has invalid YAML.*the loop ended \(FAILED, run /,
    );
    assert.deepEqual(marker(dir, runId), ["completion_reason=FAILED", "promise=COMPLETE"]);
    assert.match(readFileSync(file, "utf8"), /^active: false$/m);
    assert.deepEqual(await handleStop(input(), deps(dir)), { kind: "allow", message: null });
    assert.deepEqual(marker(dir, runId), ["completion_reason=FAILED", "promise=COMPLETE"]);
  });

  test("a state file with a bad field (iteration: abc) is corrupt too", async () => {
    const dir = project();
    const runId = await start(dir);
    patchHookLoop(hookFiles(dir).loop, { iteration: 1 });
    const file = hookFiles(dir).loop;
    writeFileSync(file, readFileSync(file, "utf8").replace(/^iteration: 1$/m, "iteration: abc"));
    const decision = await handleStop(input(), deps(dir));
    assert.match(
      decision.kind === "allow" ? (decision.message ?? "") : "",
      /iteration: expected a whole number of 1 or more, got "abc"/,
    );
    assert.deepEqual(marker(dir, runId), ["completion_reason=FAILED", "promise=COMPLETE"]);
  });

  test("a review criterion written into the loop file ends the loop FAILED at the next stop, saying why, instead of blocking in vain", async () => {
    const dir = project();
    const runId = await start(dir, {
      maxIterations: 0,
      criteria: [
        {
          type: "review",
          check: "claude",
          review: { agent: "claude", model: null, prompt: null, command: null, timeoutMs: 60_000 },
        },
      ],
    });
    const decision = await handleStop(input({ lastAssistantMessage: "working" }), deps(dir));
    assert.equal(decision.kind, "allow");
    assert.match(
      decision.kind === "allow" ? (decision.message ?? "") : "",
      /FAILED.*a type: review criterion is in ralph-loop\.local\.md, but only ralph run starts a reviewer/,
    );
    assert.deepEqual(marker(dir, runId), ["completion_reason=FAILED", "promise=COMPLETE"]);
  });

  test("a STOP file in the run directory (ralph stop) ends the loop STOPPED", async () => {
    const dir = project();
    const runId = await start(dir);
    writeFileSync(runPaths(dir, runId).stop, "stop\n");
    assert.equal((await handleStop(input(), deps(dir))).kind, "allow");
    assert.deepEqual(marker(dir, runId), ["completion_reason=STOPPED", "promise=COMPLETE"]);
  });

  test("stop_hook_active and Claude Code's block cap: the loop pauses instead of wasting a block, and the next turn resumes it", async () => {
    const dir = project();
    const runId = await start(dir, { maxIterations: 0 });
    const env = { CLAUDE_CODE_STOP_HOOK_BLOCK_CAP: "2" };
    assertBlock(await handleStop(input({ stopHookActive: false }), deps(dir, env)));
    const second = await handleStop(input({ stopHookActive: true }), deps(dir, env));
    assertBlock(second);
    assert.match(second.systemMessage, /pauses after this iteration/);
    const third = await handleStop(input({ stopHookActive: true }), deps(dir, env));
    assert.equal(third.kind, "allow");
    assert.match(third.kind === "allow" ? (third.message ?? "") : "", /paused before iteration 4 .*send any message/);
    assert.equal(state(dir).iteration, 4);
    assert.equal(state(dir).active, true);
    // The user's next message starts a new turn (stop_hook_active false): the loop blocks again.
    assertBlock(await handleStop(input({ stopHookActive: false }), deps(dir, env)));
    assert.equal(state(dir).iteration, 5);
    assert.deepEqual(
      events(dir, runId)
        .filter((e) => e.type === "iteration_ended")
        .map((e) => e.result),
      ["continue", "continue", "paused", "continue"],
    );
  });

  test("an <ask> lets the session stop with the question shown; the person's reply is the answer and the loop goes on", async () => {
    const dir = project();
    const runId = await start(dir);
    const asked = await handleStop(
      input({ lastAssistantMessage: "I found two schemas.\n<ask>Keep the old one?</ask>" }),
      deps(dir),
    );
    assert.equal(asked.kind, "allow", JSON.stringify(asked));
    assert.match(
      asked.kind === "allow" ? (asked.message ?? "") : "",
      /^ralph: the agent asks: Keep the old one\? · reply in this session to answer: the loop goes on with iteration 2\/5 \(run /,
    );
    assert.equal(state(dir).iteration, 2);
    assert.equal(state(dir).active, true);
    const listed = listRuns(dir, () => false, new Date()).find((run) => run.id === runId);
    assert.equal(listed?.question, "Keep the old one?");
    // The reply started a new turn; at its stop the question is closed and the loop blocks as usual.
    assertBlock(await handleStop(input(), deps(dir)));
    assert.equal(listRuns(dir, () => false, new Date()).find((run) => run.id === runId)?.question, null);
    const types = events(dir, runId).map((event) => event.type);
    assert.deepEqual(
      types.filter((type) => type === "needs_human" || type === "answered"),
      ["needs_human", "answered"],
    );
    assert.deepEqual(
      events(dir, runId)
        .filter((e) => e.type === "iteration_ended")
        .map((e) => e.result),
      ["asked", "continue"],
    );
  });

  test("a quoted or negated <ask> in the last message is not a question: the loop blocks as usual", async () => {
    const dir = project();
    await start(dir);
    assertBlock(
      await handleStop(input({ lastAssistantMessage: 'I will not write "<ask>Keep the old one?</ask>"' }), deps(dir)),
    );
    assertBlock(
      await handleStop(input({ lastAssistantMessage: "I won't ask <ask>Keep the old one?</ask>" }), deps(dir)),
    );
  });

  test("a new turn (stop_hook_active false, e.g. after the user interrupted) restarts the count of blocks", async () => {
    const dir = project();
    const runId = await start(dir, { maxIterations: 0 });
    const env = { CLAUDE_CODE_STOP_HOOK_BLOCK_CAP: "3" };
    for (const active of [false, true])
      assertBlock(await handleStop(input({ stopHookActive: active }), deps(dir, env)));
    // The turn was interrupted: Claude Code's count restarts with the user's next message, and so does ralph's.
    for (const active of [false, true, true])
      assertBlock(await handleStop(input({ stopHookActive: active }), deps(dir, env)));
    assert.equal((await handleStop(input({ stopHookActive: true }), deps(dir, env))).kind, "allow");
    assert.deepEqual(
      events(dir, runId)
        .filter((e) => e.type === "iteration_ended")
        .map((e) => e.blocks_this_turn),
      [0, 1, 0, 1, 2, 3],
    );
  });

  test("the default cap is 8 honoured blocks; CLAUDE_CODE_STOP_HOOK_BLOCK_CAP=0 removes it", async () => {
    const dir = project();
    await start(dir, { maxIterations: 0 });
    for (let i = 0; i < 8; i++) assertBlock(await handleStop(input({ stopHookActive: i > 0 }), deps(dir)));
    assert.equal((await handleStop(input({ stopHookActive: true }), deps(dir))).kind, "allow");
    const other = project();
    await start(other, { maxIterations: 0 });
    for (let i = 0; i < 10; i++)
      assertBlock(
        await handleStop(input({ stopHookActive: i > 0 }), deps(other, { CLAUDE_CODE_STOP_HOOK_BLOCK_CAP: "0" })),
      );
  });

  test("without last_assistant_message the transcript is read, waiting for an entry newer than the previous decision", async () => {
    const entry = (text: string, at: Date) =>
      `${JSON.stringify({ type: "assistant", timestamp: at.toISOString(), message: { id: `m-${at.getTime()}`, role: "assistant", content: [{ type: "text", text }] } })}\n`;
    for (const attempts of [1, 50]) {
      const dir = project();
      const runId = await start(dir);
      const transcript = join(dir, "transcript.jsonl");
      writeFileSync(transcript, entry("<promise>DONE</promise> (an old message)", new Date(Date.now() - 60_000)));
      const pending = handleStop(input({ lastAssistantMessage: null, transcriptPath: transcript }), {
        ...deps(dir),
        transcriptRetry: { attempts, delayMs: 20 },
      });
      // The first read has happened synchronously inside handleStop: this line arrives "late".
      appendFileSync(transcript, entry("Finished. <promise>DONE</promise>", new Date(Date.now() + 1000)));
      const decision = await pending;
      if (attempts === 1) {
        assertBlock(decision);
        assert.equal(events(dir, runId).find((e) => e.type === "iteration_ended")?.message_source, "none");
      } else {
        assert.equal(decision.kind, "allow", JSON.stringify(decision));
        assert.deepEqual(marker(dir, runId), ["completion_reason=DONE", "promise=COMPLETE"]);
      }
    }
  });

  test("with last_assistant_message the transcript is still waited for: this turn's call counts in the tokens", async () => {
    const entry = (at: Date) =>
      `${JSON.stringify({ type: "assistant", timestamp: at.toISOString(), message: { id: `m-${at.getTime()}`, role: "assistant", content: [{ type: "text", text: "Working." }], usage: { input_tokens: 100, output_tokens: 20 } } })}\n`;
    for (const attempts of [1, 50]) {
      const dir = project();
      const runId = await start(dir);
      const transcript = join(dir, "transcript.jsonl");
      writeFileSync(transcript, "");
      const pending = handleStop(input({ lastAssistantMessage: "Working.", transcriptPath: transcript }), {
        ...deps(dir),
        transcriptRetry: { attempts, delayMs: 20 },
      });
      // This turn's line arrives "late": after the decision when it is made at once, before the first retry.
      setImmediate(() => appendFileSync(transcript, entry(new Date(Date.now() + 1000))));
      assertBlock(await pending);
      const tokens = (JSON.parse(readFileSync(runPaths(dir, runId).status, "utf8")) as { tokens: unknown }).tokens;
      // Control: read at once (one attempt), the late call is missed.
      assert.deepEqual(
        tokens,
        attempts === 1
          ? { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }
          : { input: 100, output: 20, cacheRead: 0, cacheWrite: 0 },
      );
    }
  });

  test(
    "with last_assistant_message, a fresh transcript entry without text (a tool call) is this turn's: no wait",
    { timeout: 20_000 },
    async () => {
      const dir = project();
      const runId = await start(dir);
      const transcript = join(dir, "transcript.jsonl");
      const call = {
        type: "assistant",
        timestamp: new Date(Date.now() + 1000).toISOString(),
        message: {
          id: "m-tool",
          role: "assistant",
          content: [{ type: "tool_use", id: "t", name: "Bash", input: {} }],
          usage: { input_tokens: 7, output_tokens: 3 },
        },
      };
      writeFileSync(transcript, `${JSON.stringify(call)}\n`);
      // A wait for an entry with text would last the whole minute of this retry and time the test out.
      assertBlock(
        await handleStop(input({ lastAssistantMessage: "Done with the tool.", transcriptPath: transcript }), {
          ...deps(dir),
          transcriptRetry: { attempts: 2, delayMs: 60_000 },
        }),
      );
      assert.deepEqual((JSON.parse(readFileSync(runPaths(dir, runId).status, "utf8")) as { tokens: unknown }).tokens, {
        input: 7,
        output: 3,
        cacheRead: 0,
        cacheWrite: 0,
      });
    },
  );

  test("a hand-written state file without run_id gets a run directory at its first stop", async () => {
    const dir = project();
    mkdirSync(join(dir, ".claude"));
    writeFileSync(
      hookFiles(dir).loop,
      "---\nactive: true\niteration: 1\nmax_iterations: 2\ncompletion_promise: null\n---\nKeep going.\n",
    );
    const decision = await handleStop(input(), deps(dir));
    assertBlock(decision);
    assert.equal(decision.reason, "Keep going.");
    const runId = state(dir).runId;
    assert.ok(runId !== null && existsSync(runPaths(dir, runId).status));
    assert.equal(JSON.parse(readFileSync(runPaths(dir, runId).status, "utf8")).mode, "hook");
  });

  test("a daily budget spent today ends the loop BUDGET_EXCEEDED at its next stop, naming the budget", async () => {
    const dir = project();
    const ledger = mkdtempSync(join(root, "state-"));
    writeFileSync(join(dir, "ralph.yaml"), "budget:\n  daily: 0.02\n");
    const runId = await start(dir);
    const env = { XDG_STATE_HOME: ledger, XDG_CONFIG_HOME: join(ledger, "config") };
    // Under the budget: the loop goes on.
    appendCall(spendCall(dir, 0.01), env);
    assertBlock(await handleStop(input(), deps(dir, env)));
    // Another run of the project spends the rest of the day's budget: the next stop ends the loop.
    appendCall(spendCall(dir, 0.01), env);
    const decision = await handleStop(input({ stopHookActive: true }), deps(dir, env));
    assert.equal(decision.kind, "allow", JSON.stringify(decision));
    assert.deepEqual(marker(dir, runId)[0], "completion_reason=BUDGET_EXCEEDED");
    const ended = events(dir, runId).find((e) => e.type === "run_ended");
    assert.match(
      String(ended?.detail),
      /the project's daily budget is spent: \$0\.0200 today \(UTC\), budget\.daily \$0\.02 in ralph\.yaml/,
    );
    assert.equal(state(dir).active, false);
  });
});
