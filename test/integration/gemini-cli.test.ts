// The real pinned Gemini CLI against the fake Gemini API: through `ralph run --agent gemini`, and
// directly through our adapter and parser.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import type { ChildProcess } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { geminiAdapter } from "../../src/agents/gemini.js";
import { completionMarker, onlyRunDir, processAlive, readEvents, readStatus, runRalph } from "../helpers/cli.js";
import { GEMINI_TEST_MODEL, geminiEnvironment, PINNED_GEMINI_BIN } from "../fixtures/fake-gemini-env.js";
import { errorTurn, hangTurn, startFakeGemini, textTurn, toolTurn } from "../fixtures/fake-gemini-server.js";
import { childrenOf, commandOf, runAgentCli, type CliRun } from "../fixtures/run-agent-cli.js";
import { cliCases } from "../fixtures/cli-cases.js";

const WAIT_MS = 30_000;
const { children, newCase, waitForTool, assertSigtermEndsIteration } = cliCases(
  "ralph-gemini-cli-",
  startFakeGemini,
  geminiEnvironment,
);

function runGemini(
  c: { cwd: string; base: string; env: NodeJS.ProcessEnv },
  started?: (child: ChildProcess) => void,
): Promise<CliRun> {
  const options = {
    adapter: geminiAdapter,
    bin: PINNED_GEMINI_BIN,
    cwd: c.cwd,
    env: c.env,
    scratchDir: c.base,
    model: GEMINI_TEST_MODEL,
    children,
  };
  return runAgentCli({ ...options, timeoutMs: WAIT_MS, ...(started ? { started } : {}) });
}

const BACKGROUND_SLEEP = "sleep 300 & echo $! > sleep.pid; wait";

describe("Gemini CLI 0.61.0 against the fake Gemini API", { timeout: 150_000 }, () => {
  test("ralph run --agent gemini: write_file and run_shell_command, then the promise ends the run DONE", async () => {
    const c = await newCase((cwd) => [
      toolTurn("write_file", { file_path: join(cwd, "hello.txt"), content: "hello from gemini\n" }),
      toolTurn("run_shell_command", { command: "cat hello.txt > copy.txt" }),
      textTurn("Wrote hello.txt. <promise>DONE</promise>"),
    ]);
    const target = join(c.cwd, "hello.txt");
    // Larger than one argv word may be (128 KiB on Linux): only stdin can carry it.
    const prompt = `Write hello.txt.\n${"Context line for the task.\n".repeat(8000)}END-OF-PROMPT`;
    writeFileSync(join(c.cwd, "PROMPT.md"), prompt);
    const args = [
      "run",
      "--agent",
      "gemini",
      "--model",
      GEMINI_TEST_MODEL,
      "--completion-promise",
      "DONE",
      "--prompt-file",
      "PROMPT.md",
    ];
    const result = await runRalph(args, c.cwd, c.env, WAIT_MS);

    assert.equal(result.code, 0, result.stderr);
    const runDir = onlyRunDir(c.cwd);
    assert.deepEqual(completionMarker(runDir), ["completion_reason=DONE", "promise=COMPLETE"]);
    assert.equal(readFileSync(target, "utf8"), "hello from gemini\n");
    assert.equal(readFileSync(join(c.cwd, "copy.txt"), "utf8"), "hello from gemini\n");
    const status = readStatus(runDir);
    // Three requests of 100 input tokens (10 cached, kept apart) and 20 output tokens each.
    assert.deepEqual(status.tokens, { input: 270, output: 60, cacheRead: 30, cacheWrite: 0 });
    assert.match(String(status.session_id), /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    const tools = readEvents(runDir).filter((event) => event.type === "agent_event" && event.kind === "tool_use");
    assert.deepEqual(
      tools.map((event) => [event.tool, event.text]),
      [
        ["write_file", target],
        ["run_shell_command", "cat hello.txt > copy.txt"],
      ],
    );
    assert.ok(c.fake.mainRequests()[0]?.userText.includes(prompt), "the whole prompt reached the model");
    assert.equal(c.fake.remaining(), 0);
  });

  test("SIGTERM to ralph during a shell tool: ralph dies of SIGTERM and nothing of the iteration survives", async () => {
    const c = await newCase([toolTurn("run_shell_command", { command: BACKGROUND_SLEEP }), hangTurn()]);
    await assertSigtermEndsIteration(
      c,
      ["run", "--agent", "gemini", "--model", GEMINI_TEST_MODEL, "work"],
      "sleep.pid",
      WAIT_MS,
    );
  });

  test("known-false control: SIGINT to Gemini CLI ends it with exit 0 and no result, and its tool's sleep survives", async () => {
    const c = await newCase([toolTurn("run_shell_command", { command: BACKGROUND_SLEEP }), hangTurn()]);
    let sleepPid = 0;
    let cliPids: number[] = [];
    const run = await runGemini(c, (child) => {
      void waitForTool(join(c.cwd, "sleep.pid"), WAIT_MS).then((pid) => {
        sleepPid = pid;
        // Gemini CLI relaunches itself with a larger heap; the parent only waits, ignoring SIGINT and SIGTERM.
        cliPids = childrenOf(child.pid as number).filter((candidate) => commandOf(candidate).includes("gemini"));
        for (const cli of cliPids) process.kill(cli, "SIGINT");
      });
    });

    assert.equal(cliPids.length, 1, "one relaunched Gemini CLI process");
    assert.equal(run.code, 0);
    assert.equal(run.outcome.sawResult, false);
    assert.equal(run.outcome.finalMessage, null);
    assert.equal(processAlive(sleepPid), true, "the sleep outlived Gemini CLI");
  });

  test("API errors: a daily quota and a retry delay are rate limits (with the delay as reset time); a bad key is auth", async () => {
    const quota = {
      error: {
        code: 429,
        message: "You exceeded your current quota, please check your plan and billing details.",
        status: "RESOURCE_EXHAUSTED",
        details: [
          {
            "@type": "type.googleapis.com/google.rpc.QuotaFailure",
            violations: [{ quotaId: "GenerateRequestsPerDayPerProjectPerModel-FreeTier" }],
          },
        ],
      },
    };
    const delayed = {
      error: {
        code: 429,
        message: "Resource has been exhausted (e.g. check quota).",
        status: "RESOURCE_EXHAUSTED",
        details: [{ "@type": "type.googleapis.com/google.rpc.RetryInfo", retryDelay: "3600s" }],
      },
    };
    const badKey = {
      error: {
        code: 400,
        message: "API key not valid. Please pass a valid API key.",
        status: "INVALID_ARGUMENT",
        details: [
          { "@type": "type.googleapis.com/google.rpc.ErrorInfo", reason: "API_KEY_INVALID", domain: "googleapis.com" },
        ],
      },
    };
    const cases = await Promise.all(
      [quota, delayed].map((body) => newCase([errorTurn(429, body)])).concat(newCase([errorTurn(400, badKey)])),
    );
    const before = Date.now();
    const [dailyRun, hourlyRun, keyRun] = (await Promise.all(cases.map((c) => runGemini(c)))) as [
      CliRun,
      CliRun,
      CliRun,
    ];

    for (const run of [dailyRun, hourlyRun, keyRun]) {
      assert.notEqual(run.code, 0);
      assert.equal(run.outcome.sawResult, true);
      assert.equal(run.outcome.finalMessage, null);
      assert.match(run.outcome.sessionId ?? "", /^[0-9a-f-]{36}$/);
    }
    assert.equal(dailyRun.outcome.error?.kind, "rate_limit", JSON.stringify(dailyRun.outcome));
    assert.match(dailyRun.outcome.limit?.message ?? "", /exhausted your daily quota/);
    assert.equal(dailyRun.outcome.limit?.resetAt, null);
    assert.equal(hourlyRun.outcome.error?.kind, "rate_limit", JSON.stringify(hourlyRun.outcome));
    const reset = hourlyRun.outcome.limit?.resetAt?.getTime() ?? 0;
    assert.ok(reset >= before + 3600_000 && reset <= Date.now() + 3600_000, `reset ${new Date(reset).toISOString()}`);
    assert.equal(keyRun.outcome.error?.kind, "auth", JSON.stringify(keyRun.outcome));
    assert.equal(keyRun.outcome.limit, undefined);
  });
});
