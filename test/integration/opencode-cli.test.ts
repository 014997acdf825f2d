// The real pinned OpenCode CLI against the fake OpenAI Chat Completions API: through
// `ralph run --agent opencode`, and directly through our adapter and parser.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import type { ChildProcess } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { opencodeAdapter } from "../../src/agents/opencode.js";
import { completionMarker, onlyRunDir, processAlive, readEvents, readStatus, runRalph } from "../helpers/cli.js";
import { FAKE_MODEL, OPENCODE_PRICE, opencodeEnvironment, PINNED_OPENCODE_BIN } from "../fixtures/fake-openai-env.js";
import { runAgentCli, sessionOf, type CliRun } from "../fixtures/run-agent-cli.js";
import { errorTurn, hangTurn, startFakeOpenAI, textTurn, toolTurn } from "../fixtures/fake-openai-server.js";
import { cliCases } from "../fixtures/cli-cases.js";

const WAIT_MS = 45_000;
const MODEL = `fake/${FAKE_MODEL}`;
const { children, newCase, waitForTool, assertSigtermEndsIteration } = cliCases(
  "ralph-opencode-cli-",
  startFakeOpenAI,
  opencodeEnvironment,
);

function runOpencode(
  c: { cwd: string; base: string; env: NodeJS.ProcessEnv },
  started?: (child: ChildProcess) => void,
): Promise<CliRun> {
  const options = {
    adapter: opencodeAdapter,
    bin: PINNED_OPENCODE_BIN,
    cwd: c.cwd,
    env: c.env,
    scratchDir: c.base,
    model: MODEL,
    children,
  };
  return runAgentCli({ ...options, timeoutMs: WAIT_MS, ...(started ? { started } : {}) });
}

// OpenCode leaves even its tool's own process behind, so the tool needs no background job to show it.
const SLEEP_TOOL = { command: "echo $$ > sleep.pid; exec sleep 300", description: "Sleep" };

describe("OpenCode 1.18.33 against the fake Chat Completions API", { timeout: 150_000 }, () => {
  test("ralph run --agent opencode: write and bash tools, then the promise ends the run DONE with tokens and cost", async () => {
    const c = await newCase((cwd) => [
      toolTurn("write", { filePath: join(cwd, "hello.txt"), content: "hello from opencode\n" }),
      toolTurn("bash", { command: "cat hello.txt > copy.txt", description: "Copy the file" }),
      textTurn("Wrote hello.txt. <promise>DONE</promise>"),
    ]);
    // Larger than one argv word may be (128 KiB on Linux): only stdin can carry it.
    const prompt = `Write hello.txt.\n${"Context line for the task.\n".repeat(8000)}END-OF-PROMPT`;
    writeFileSync(join(c.cwd, "PROMPT.md"), prompt);
    const args = [
      "run",
      "--agent",
      "opencode",
      "--model",
      MODEL,
      "--completion-promise",
      "DONE",
      "--prompt-file",
      "PROMPT.md",
    ];
    const result = await runRalph(args, c.cwd, c.env, WAIT_MS);

    assert.equal(result.code, 0, result.stderr);
    const runDir = onlyRunDir(c.cwd);
    assert.deepEqual(completionMarker(runDir), ["completion_reason=DONE", "promise=COMPLETE"]);
    assert.equal(readFileSync(join(c.cwd, "hello.txt"), "utf8"), "hello from opencode\n");
    assert.equal(readFileSync(join(c.cwd, "copy.txt"), "utf8"), "hello from opencode\n");
    const status = readStatus(runDir);
    // Three steps of 90 uncached input, 10 cached and 20 output tokens, priced per million tokens.
    assert.deepEqual(status.tokens, { input: 270, output: 60, cacheRead: 30, cacheWrite: 0 });
    const expectedCost =
      (3 * (90 * OPENCODE_PRICE.input + 20 * OPENCODE_PRICE.output + 10 * OPENCODE_PRICE.cache_read)) / 1e6;
    assert.ok(
      Math.abs(Number(status.cost_usd) - expectedCost) < 1e-9,
      `cost ${String(status.cost_usd)}, expected ${expectedCost}`,
    );
    assert.match(String(status.session_id), /^ses_\w+$/);
    const tools = readEvents(runDir).filter((event) => event.type === "agent_event" && event.kind === "tool_use");
    assert.deepEqual(
      tools.map((event) => [event.tool, event.text]),
      [
        ["write", join(c.cwd, "hello.txt")],
        ["bash", "cat hello.txt > copy.txt"],
      ],
    );
    assert.ok(c.fake.mainRequests()[0]?.userText.includes(prompt), "the whole prompt reached the model");
    assert.equal(c.fake.remaining(), 0);
  });

  test("SIGTERM to ralph during a bash tool: ralph dies of SIGTERM and nothing of the iteration survives", async () => {
    const c = await newCase([toolTurn("bash", SLEEP_TOOL), hangTurn()]);
    await assertSigtermEndsIteration(c, ["run", "--agent", "opencode", "--model", MODEL, "work"], "sleep.pid", WAIT_MS);
  });

  test("known-false control: SIGTERM to opencode alone ends it (143) but its bash tool's process survives", async () => {
    const c = await newCase([toolTurn("bash", SLEEP_TOOL), hangTurn()]);
    let sleepPid = 0;
    let ownSession = false;
    const run = await runOpencode(c, (child) => {
      void waitForTool(join(c.cwd, "sleep.pid"), WAIT_MS).then((pid) => {
        sleepPid = pid;
        ownSession = sessionOf(pid) === pid;
        child.kill("SIGTERM");
      });
    });

    assert.ok(sleepPid > 0, "the tool started");
    assert.equal(ownSession, true, "OpenCode starts its bash tool in a session of its own");
    assert.ok(run.signal === "SIGTERM" || run.code === 143, `code ${String(run.code)}, signal ${String(run.signal)}`);
    assert.equal(run.outcome.sawResult, false);
    assert.equal(processAlive(sleepPid), true, "the tool's process outlived opencode");
  });

  test("401: an auth outcome, not a limit", async () => {
    const c = await newCase([
      errorTurn(401, {
        error: { message: "Incorrect API key provided: test.", type: "invalid_request_error", code: "invalid_api_key" },
      }),
    ]);
    const run = await runOpencode(c);

    assert.equal(run.code, 1);
    assert.equal(run.outcome.sawResult, true);
    assert.equal(run.outcome.finalMessage, null);
    assert.equal(run.outcome.error?.kind, "auth", JSON.stringify(run.outcome));
    assert.match(run.outcome.error?.message ?? "", /Incorrect API key/);
    assert.equal(run.outcome.limit, undefined);
    assert.match(run.outcome.sessionId ?? "", /^ses_\w+$/);
    // Nothing went further than 127.0.0.1: OpenCode's registry lookup came to the fake.
    assert.ok(
      c.fake.requests.every((request) => request.kind !== "other"),
      JSON.stringify(c.fake.requests.map((r) => r.path)),
    );
  });
});
