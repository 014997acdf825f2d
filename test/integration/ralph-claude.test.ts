// `ralph run --agent claude` end to end: the real pinned Claude Code CLI, driven by the fake Anthropic API.
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { basename, join } from "node:path";
import { authErrorTurn, bashTurn, rateLimitTurn, textTurn, writeTurn } from "../fixtures/fake-anthropic.js";
import { processesOfRun, RalphClaudeLab, type RalphClaudeCase } from "../fixtures/ralph-claude-lab.js";
import { waitFor } from "../helpers/wait.js";
import { completionMarker, processAlive, progressLines, readEvents, readStatus } from "../helpers/cli.js";

const lab = new RalphClaudeLab();
after(() => lab.cleanup());

const PROMPT = "Write hello.txt, then say you are done.";
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
// Claude Code prices the fake's default usage (100 in, 20 out per call) with its default model's table: $0.001 a call.
const COST_PER_CALL = 0.001;

function eventsOf(c: RalphClaudeCase, type: string): Array<Record<string, unknown>> {
  return readEvents(c.runDir).filter((event) => event.type === type);
}

/** progress.txt as key → values, in order. */
function progressValues(c: RalphClaudeCase, key: string): string[] {
  return progressLines(c.runDir)
    .filter((line) => line.startsWith(`${key}=`))
    .map((line) => line.slice(key.length + 1));
}

function assertClose(actual: unknown, expected: number, what: string): void {
  assert.equal(typeof actual, "number", `${what} is a number`);
  assert.ok(Math.abs((actual as number) - expected) < 1e-9, `${what}: ${String(actual)} ≠ ${expected}`);
}

/** Pids of the `sleep 317` a scenario's Bash tool runs, found by argv and the run id in their environment. */
function toolSleeps(runId: string): number[] {
  return processesOfRun(runId, (argv) => basename(argv[0] ?? "") === "sleep" && argv[1] === "317");
}

describe("ralph run --agent claude with the real Claude Code CLI", { timeout: 150_000 }, () => {
  test("Write tool, then the promise: DONE, the file, cost, tokens and session recorded", async () => {
    const c = await lab.newCase((dir) => [
      writeTurn(join(dir, "hello.txt"), "hello from claude\n"),
      textTurn("Wrote it. <promise>DONE</promise>"),
    ]);
    const result = await lab.runRalph(c, ["--completion-promise", "DONE", PROMPT]);

    assert.equal(result.code, 0, result.stderr);
    assert.deepEqual(completionMarker(c.runDir), ["completion_reason=DONE", "promise=COMPLETE"]);
    assert.equal(readFileSync(join(c.projectDir, "hello.txt"), "utf8"), "hello from claude\n");
    // The prompt reached Claude Code on stdin, and its two model calls were the scripted ones.
    const main = c.fake.mainRequests();
    assert.equal(main.length, 2);
    assert.match(main[0]?.lastMessageText ?? "", /Write hello\.txt, then say you are done\./);
    assert.equal(c.fake.remaining(), 0);

    const sessionHeader = main[0]?.headers["x-claude-code-session-id"];
    assert.match(String(sessionHeader), UUID);
    const status = readStatus(c.runDir);
    assert.equal(status.state, "ended");
    assert.equal(status.exit_reason, "DONE");
    assert.equal(status.iteration, 1);
    assertClose(status.cost_usd, 2 * COST_PER_CALL, "status cost_usd");
    assert.deepEqual(status.tokens, { input: 200, output: 40, cacheRead: 0, cacheWrite: 0 });
    assert.equal(status.session_id, sessionHeader, "the session id Claude Code used with the API");

    const [ended, ...more] = eventsOf(c, "iteration_ended");
    assert.equal(more.length, 0);
    assert.equal(ended?.result, "done");
    assert.equal(ended?.promise, "found");
    assertClose(ended?.cost_usd, 2 * COST_PER_CALL, "iteration_ended cost_usd");
    assert.deepEqual(ended?.tokens, { input: 200, output: 40, cacheRead: 0, cacheWrite: 0 });
    assert.equal(ended?.session_id, sessionHeader);
    const toolUse = eventsOf(c, "agent_event").find((event) => event.kind === "tool_use");
    assert.deepEqual([toolUse?.tool, toolUse?.text], ["Write", join(c.projectDir, "hello.txt")]);
    assert.deepEqual(progressValues(c, "cost_usd"), [String(2 * COST_PER_CALL)]);
    assert.deepEqual(progressValues(c, "tokens_in"), ["200"]);
    assert.deepEqual(progressValues(c, "tokens_out"), ["40"]);
    assert.deepEqual(progressValues(c, "session_id"), [sessionHeader]);
    assert.match(result.stdout, /LOOP_COMPLETE: the promise was found \(no completion criteria are set\)\./);
  });

  test("429 with a reset in its message: waiting, then the same iteration succeeds", async () => {
    // The server's error message is what reaches Claude Code's result line ("API Error: Request rejected (429) · <message>");
    // its retry-after and anthropic-ratelimit-*-reset headers do not.
    const limited = rateLimitTurn({
      retryAfterSeconds: 3,
      shouldRetry: false,
      message: "Rate limit reached; resets in 3 seconds",
    });
    const c = await lab.newCase((dir) => [
      limited,
      writeTurn(join(dir, "hello.txt"), "after the limit\n"),
      textTurn("<promise>DONE</promise>"),
    ]);
    const { child, done } = lab.startRalph(c, ["--completion-promise", "DONE", PROMPT]);
    const timer = setTimeout(() => child.kill("SIGKILL"), 45_000);

    const waiting = await waitFor(
      () => {
        try {
          const status = readStatus(c.runDir);
          return status.state === "waiting" ? status : null;
        } catch {
          return null; // not written yet
        }
      },
      "status state waiting",
      30_000,
    );
    // Seen while waiting: only the limited call has been made so far.
    assert.equal(c.fake.mainRequests().length, 1);
    // The reset came from the message: not the 60 s ralph falls back to when it finds none.
    const resumeIn = Date.parse(String(waiting.resume_at)) - Date.now();
    assert.ok(resumeIn < 4000, `resume_at ${String(waiting.resume_at)} is ${resumeIn} ms away`);
    const result = await done;
    clearTimeout(timer);

    assert.equal(result.code, 0, result.stderr);
    assert.deepEqual(completionMarker(c.runDir), ["completion_reason=DONE", "promise=COMPLETE"]);
    assert.equal(readFileSync(join(c.projectDir, "hello.txt"), "utf8"), "after the limit\n");
    const [limit, ...moreLimits] = eventsOf(c, "waiting_limit");
    assert.equal(moreLimits.length, 0);
    assert.equal(limit?.iteration, 1);
    assert.match(String(limit?.message), /429.*resets in 3 seconds/);
    assert.equal(limit?.resume_at, waiting.resume_at);
    const [limitedEnd, doneEnd] = eventsOf(c, "iteration_ended");
    assert.deepEqual([limitedEnd?.iteration, limitedEnd?.result, limitedEnd?.counted], [1, "usage_limit", false]);
    assert.deepEqual([doneEnd?.iteration, doneEnd?.result], [1, "done"]);
    // The reset was read from the message (about 3 s after the limited call), and ralph waited for it.
    const resumeAt = Date.parse(String(limit?.resume_at));
    const limitedAt = Date.parse(String(limitedEnd?.ts));
    assert.ok(
      resumeAt - limitedAt > 2000 && resumeAt - limitedAt < 4000,
      `resume ${resumeAt - limitedAt} ms after the limit`,
    );
    const starts = eventsOf(c, "iteration_started");
    assert.deepEqual(
      starts.map((event) => event.iteration),
      [1, 1],
    );
    assert.ok(Date.parse(String(starts[1]?.ts)) >= resumeAt, "the retry started after resume_at");
    const status = readStatus(c.runDir);
    assert.deepEqual([status.iteration, status.exit_reason, status.calls], [1, "DONE", 2]);
    assert.equal(status.resume_at ?? null, null);
    assertClose(status.cost_usd, 2 * COST_PER_CALL, "status cost_usd");
    assert.deepEqual(progressValues(c, "result"), ["usage_limit", "done"]);
  });

  test("401: an auth failure, FAILED, exit 1", async () => {
    const c = await lab.newCase(() => [authErrorTurn()]);
    const result = await lab.runRalph(c, ["--max-failures", "1", "--completion-promise", "DONE", PROMPT]);

    assert.equal(result.code, 1, result.stderr);
    assert.deepEqual(completionMarker(c.runDir), ["completion_reason=FAILED", "promise=COMPLETE"]);
    const ended = eventsOf(c, "iteration_ended");
    assert.equal(ended.length, 1);
    assert.equal(ended[0]?.result, "failed");
    assert.match(String(ended[0]?.error), /^auth: .*(invalid api key|authenticat)/i);
    assert.equal(eventsOf(c, "waiting_limit").length, 0, "an auth failure is never waited out");
    const status = readStatus(c.runDir);
    assert.deepEqual([status.exit_reason, status.exit_code], ["FAILED", 1]);
    assert.deepEqual(
      eventsOf(c, "run_ended").map((event) => [event.reason, event.exit_code]),
      [["FAILED", 1]],
    );
    assert.equal(c.fake.mainRequests().length, 1);
  });

  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    test(`${signal} while the Bash tool runs a sleep in its own session: INTERRUPTED, nothing left`, async () => {
      const grace = 2000;
      const c = await lab.newCase(() => [bashTurn("sleep 317"), textTurn("<promise>DONE</promise>")]);
      const { child, done } = lab.startRalph(c, [
        "--grace",
        `${grace / 1000}s`,
        "--completion-promise",
        "DONE",
        PROMPT,
      ]);
      const timer = setTimeout(() => child.kill("SIGKILL"), 45_000);

      const [sleepPid] = await waitFor(
        () => {
          const found = toolSleeps(c.runId);
          return found.length > 0 ? found : null;
        },
        "the tool's sleep 317",
        30_000,
      );
      // The tool leads its own session: a signal to ralph's or claude's group never reaches it.
      const session = Number(
        readFileSync(`/proc/${String(sleepPid)}/stat`, "utf8")
          .split(") ")[1]
          ?.split(" ")[3],
      );
      assert.notEqual(
        session,
        Number(
          readFileSync(`/proc/${String(child.pid)}/stat`, "utf8")
            .split(") ")[1]
            ?.split(" ")[3],
        ),
      );
      const signalledAt = Date.now();
      child.kill(signal);
      const result = await done;
      clearTimeout(timer);

      assert.deepEqual([result.code, result.signal], [null, signal], result.stderr);
      assert.deepEqual(completionMarker(c.runDir), ["completion_reason=INTERRUPTED", "promise=COMPLETE"]);
      const status = readStatus(c.runDir);
      assert.deepEqual([status.state, status.exit_reason, status.iteration], ["ended", "INTERRUPTED", 1]);
      assert.deepEqual(
        eventsOf(c, "run_ended").map((event) => event.reason),
        ["INTERRUPTED"],
      );
      assert.equal(eventsOf(c, "iteration_started").length, 1, "no iteration after the signal");
      // Nothing of the run survives: not the sleep, not its shell, not Claude Code.
      await waitFor(
        () => (processesOfRun(c.runId).length === 0 ? true : null),
        "every process of the run to end",
        grace + 1000 - (Date.now() - signalledAt),
      );
      assert.equal(processAlive(sleepPid as number), false);
    });
  }

  test("known-false control: SIGTERM to Claude Code alone leaves its tool's sleep running", async () => {
    const c = await lab.newCase(() => [bashTurn("sleep 317"), textTurn("done")]);
    const { child, done } = lab.startClaude(c, PROMPT);
    const timer = setTimeout(() => child.kill("SIGKILL"), 45_000);

    const [sleepPid] = await waitFor(
      () => {
        const found = toolSleeps(c.runId);
        return found.length > 0 ? found : null;
      },
      "the tool's sleep 317",
      30_000,
    );
    child.kill("SIGTERM");
    const result = await done;
    clearTimeout(timer);

    assert.equal(result.code, 143, result.stderr);
    assert.doesNotMatch(result.stdout, /"type":"result"/, "SIGTERM leaves no result line");
    // The naive single-pid kill: Claude Code is gone, its tool is not (cleanup ends it by pid).
    assert.equal(processAlive(sleepPid as number), true);
    assert.deepEqual(toolSleeps(c.runId), [sleepPid]);
  });

  test("--max-cost below the first iteration's cost: BUDGET_EXCEEDED, exit 3", async () => {
    const c = await lab.newCase(() => [textTurn("Working on it.")]);
    const result = await lab.runRalph(c, ["-n", "0", "--max-cost", "0.0005", PROMPT]);

    assert.equal(result.code, 3, result.stderr);
    assert.deepEqual(completionMarker(c.runDir), ["completion_reason=BUDGET_EXCEEDED", "promise=COMPLETE"]);
    const status = readStatus(c.runDir);
    assert.deepEqual([status.exit_reason, status.exit_code, status.iteration], ["BUDGET_EXCEEDED", 3, 1]);
    assertClose(status.cost_usd, COST_PER_CALL, "status cost_usd");
    assert.equal(eventsOf(c, "iteration_started").length, 1, "no second iteration once the budget is spent");
    assert.equal(c.fake.mainRequests().length, 1);
    assert.equal(existsSync(join(c.runDir, "iter-002.log")), false);
  });
});
