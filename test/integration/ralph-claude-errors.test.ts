// Errors no retry can fix, with the real pinned Claude Code CLI against the fake Anthropic API: the run
// ends at once as FAILED naming the cause, and the agent's own retries show as they happen.
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { authErrorTurn, overloadedTurn, textTurn } from "../fixtures/fake-anthropic.js";
import { RalphClaudeLab } from "../fixtures/ralph-claude-lab.js";
import { completionMarker, readEvents, readStatus } from "../helpers/cli.js";

const lab = new RalphClaudeLab();
after(() => lab.cleanup());

describe("non-retryable agent errors end the run at once", { timeout: 150_000 }, () => {
  test("a rejected API key while Claude Code retries: FAILED after one iteration, the retry shown, the cause named", async () => {
    // Every request is refused; with retries on, Claude Code would retry for minutes before giving up.
    const c = await lab.newCase(() => Array.from({ length: 30 }, () => authErrorTurn()));
    c.env.CLAUDE_CODE_MAX_RETRIES = "10";
    const started = Date.now();
    const result = await lab.runRalph(c, ["-n", "3", "--max-failures", "3", "fix it"], 60_000);
    const took = Date.now() - started;

    assert.equal(result.code, 1, result.stdout + result.stderr);
    const status = readStatus(c.runDir);
    assert.equal(status.exit_reason, "FAILED");
    assert.equal(status.iteration, 1, "no second iteration for an error no retry can fix");
    assert.match(String(status.last_action), /authentication failed: the API rejected Claude Code's credentials \(401/);
    assert.deepEqual(completionMarker(c.runDir), ["completion_reason=FAILED", "promise=COMPLETE"]);
    const retries = readEvents(c.runDir).filter((event) => event.type === "agent_event" && event.kind === "retry");
    assert.ok(retries.length >= 1, "Claude Code's api_retry reached the event stream");
    assert.ok(retries.some((event) => typeof event.fatal === "string"));
    // Shown on the terminal as it happened (off a TTY: a plain line), and the ending says what to do.
    assert.match(result.stdout, /! API retry 1\/10 in [\d.]+s after 401/);
    assert.match(result.stdout, /FAILED: authentication failed/);
    assert.match(result.stdout, /next: see what the agent did: ralph logs \S+ --iteration 1/);
    // Fewer requests than Claude Code's 10 retries: ralph did not wait them out.
    assert.ok(c.fake.mainRequests().length < 5, `${c.fake.mainRequests().length} requests`);
    assert.ok(took < 30_000, `took ${took} ms`);
  });

  test(
    "Claude Code as root without IS_SANDBOX refuses --dangerously-skip-permissions: FAILED after one iteration, with the way out",
    { skip: process.getuid?.() !== 0 ? "needs root" : false },
    async () => {
      const c = await lab.newCase(() => [textTurn("All done.")]);
      delete c.env.IS_SANDBOX;
      const result = await lab.runRalph(c, ["-n", "3", "--max-failures", "3", "fix it"], 60_000);
      assert.equal(result.code, 1, result.stdout + result.stderr);
      const status = readStatus(c.runDir);
      assert.equal(status.exit_reason, "FAILED");
      assert.equal(status.iteration, 1, "no second try of a refusal");
      assert.match(
        result.stdout,
        /FAILED: the agent rejected its configuration: --dangerously-skip-permissions cannot be used with root\/sudo privileges.*IS_SANDBOX=1/,
      );
      assert.equal(c.fake.mainRequests().length, 0);
    },
  );

  test("an argument Claude Code refuses (--agent-args --permission-mode nope): FAILED after one iteration, naming it", async () => {
    const c = await lab.newCase(() => [textTurn("All done.")]);
    const result = await lab.runRalph(
      c,
      ["-n", "3", "--max-failures", "3", "--agent-args", "--permission-mode nope", "fix it"],
      60_000,
    );
    assert.equal(result.code, 1, result.stdout + result.stderr);
    assert.equal(readStatus(c.runDir).iteration, 1, "no second try of a refusal");
    assert.match(
      result.stdout,
      /FAILED: the agent rejected its configuration: error: option '--permission-mode <mode>' argument 'nope' is invalid/,
    );
  });

  test("control: an overloaded API (529) is retryable, so the run goes on to the next iteration", async () => {
    const c = await lab.newCase(() => [overloadedTurn(529), textTurn("All done.")]);
    const result = await lab.runRalph(c, ["-n", "2", "fix it"], 60_000);

    assert.equal(result.code, 3, result.stdout + result.stderr);
    const status = readStatus(c.runDir);
    assert.equal(status.exit_reason, "MAX_ITERATIONS");
    assert.equal(status.iteration, 2);
    assert.match(result.stdout, /\[1\/2\] [\d.]+s failed \(api: /);
  });
});
