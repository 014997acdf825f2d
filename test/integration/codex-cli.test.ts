// The real pinned Codex CLI against the fake OpenAI Responses API: through `ralph run --agent codex`,
// and directly through our adapter and parser.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import type { ChildProcess } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { codexAdapter } from "../../src/agents/codex.js";
import { completionMarker, onlyRunDir, processAlive, readEvents, readStatus, runRalph } from "../helpers/cli.js";
import { codexEnvironment, PINNED_CODEX_BIN } from "../fixtures/fake-openai-env.js";
import { childrenOf, commandOf, killAlive, runAgentCli, sessionOf, type CliRun } from "../fixtures/run-agent-cli.js";
import { errorTurn, hangTurn, startFakeOpenAI, textTurn, toolTurn } from "../fixtures/fake-openai-server.js";
import { cliCases } from "../fixtures/cli-cases.js";

const WAIT_MS = 25_000;
const { children, strays, newCase, waitForTool, assertSigtermEndsIteration } = cliCases(
  "ralph-codex-cli-",
  startFakeOpenAI,
  codexEnvironment,
);

function runCodex(
  c: { cwd: string; base: string; env: NodeJS.ProcessEnv },
  started?: (child: ChildProcess) => void,
): Promise<CliRun> {
  return runAgentCli({
    adapter: codexAdapter,
    bin: PINNED_CODEX_BIN,
    cwd: c.cwd,
    env: c.env,
    scratchDir: c.base,
    children,
    ...(started ? { started } : {}),
  });
}

function describeProcess(pid: number): string {
  return `${pid} ${commandOf(pid)}`;
}

// The tool shell starts sleep in the background and waits for it: Codex ends the shell, not its jobs.
const BACKGROUND_SLEEP = "sleep 300 & echo $! > sleep.pid; wait";

describe("Codex 0.171.0 against the fake Responses API", { timeout: 120_000 }, () => {
  test("ralph run --agent codex: the shell tool writes a file, the promise ends the run DONE, tokens recorded", async () => {
    const c = await newCase([
      toolTurn("exec_command", { cmd: "printf 'hello from codex\\n' > hello.txt" }),
      textTurn("Wrote hello.txt. <promise>DONE</promise>"),
    ]);
    // Larger than one argv word may be (128 KiB on Linux): only stdin can carry it.
    const prompt = `Write hello.txt.\n${"Context line for the task.\n".repeat(8000)}END-OF-PROMPT`;
    writeFileSync(join(c.cwd, "PROMPT.md"), prompt);
    const result = await runRalph(
      ["run", "--agent", "codex", "--completion-promise", "DONE", "--prompt-file", "PROMPT.md"],
      c.cwd,
      c.env,
      WAIT_MS,
    );

    assert.equal(result.code, 0, result.stderr);
    const runDir = onlyRunDir(c.cwd);
    assert.deepEqual(completionMarker(runDir), ["completion_reason=DONE", "promise=COMPLETE"]);
    assert.equal(readFileSync(join(c.cwd, "hello.txt"), "utf8"), "hello from codex\n");
    const status = readStatus(runDir);
    // Two requests of 100 input tokens (10 cached, kept apart) and 20 output tokens each.
    assert.deepEqual(status.tokens, { input: 180, output: 40, cacheRead: 20, cacheWrite: 0 });
    assert.match(String(status.session_id), /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    const events = readEvents(runDir);
    const toolUse = events.find((event) => event.type === "agent_event" && event.kind === "tool_use");
    assert.equal(toolUse?.tool, "shell");
    assert.match(String(toolUse?.text), /hello\.txt/);
    const ended = events.find((event) => event.type === "iteration_ended");
    assert.deepEqual(ended?.tokens, { input: 180, output: 40, cacheRead: 20, cacheWrite: 0 });
    const [first] = c.fake.mainRequests();
    assert.ok(first?.userText.includes(prompt), "the whole prompt reached the model");
    assert.equal(c.fake.remaining(), 0);
  });

  test("SIGTERM to ralph during a shell tool: ralph dies of SIGTERM and nothing of the iteration survives", async () => {
    const c = await newCase([toolTurn("exec_command", { cmd: BACKGROUND_SLEEP }), hangTurn()]);
    // Everything ralph started for the iteration; its guardian is ralph's own watchdog and leaves after it.
    await assertSigtermEndsIteration(
      c,
      ["run", "--agent", "codex", "work"],
      "sleep.pid",
      WAIT_MS,
      ({ toolPid, child }) => {
        assert.notEqual(
          sessionOf(toolPid),
          sessionOf(child.pid as number),
          "Codex started its tool shell in a session of its own",
        );
      },
    );
  });

  test("known-false control: SIGTERM to the codex process alone leaves the tool's sleep running", async () => {
    const c = await newCase([toolTurn("exec_command", { cmd: BACKGROUND_SLEEP }), hangTurn()]);
    let sleepPid = 0;
    const run = await runCodex(c, (child) => {
      void waitForTool(join(c.cwd, "sleep.pid"), WAIT_MS).then((pid) => {
        sleepPid = pid;
        child.kill("SIGTERM");
      });
    });

    assert.ok(sleepPid > 0, "the tool started");
    assert.ok(
      run.signal === "SIGTERM" || run.code === 143,
      `codex ended by SIGTERM (code ${String(run.code)}, signal ${String(run.signal)})`,
    );
    assert.equal(run.outcome.sawResult, false);
    assert.equal(run.outcome.finalMessage, null);
    assert.equal(processAlive(sleepPid), true, "the sleep outlived codex");
  });

  test("known-false control: SIGKILL to the codex wrapper leaves the native binary and its tool running", async () => {
    const c = await newCase([toolTurn("exec_command", { cmd: "echo $$ > shell.pid; exec sleep 300" }), hangTurn()]);
    let survivors: number[] = [];
    let alive: number[] = [];
    // The survivors hold the output pipes open: the run ends only once the test has killed them.
    await runCodex(c, (child) => {
      void waitForTool(join(c.cwd, "shell.pid"), WAIT_MS).then((shellPid) => {
        // On Node 20 the `codex` script spawns the native binary as its child instead of exec'ing it.
        survivors = [...childrenOf(child.pid as number), shellPid];
        survivors.forEach((pid) => strays.add(pid));
        child.once("exit", () => {
          alive = survivors.filter(processAlive);
          killAlive(survivors);
        });
        child.kill("SIGKILL");
      });
    });

    assert.equal(survivors.length, 2, survivors.map(describeProcess).join(", "));
    assert.deepEqual(alive, survivors);
  });

  test("usage limit: a rate_limit outcome with the reset time Codex prints in local time", async () => {
    const resetsAt = Math.floor(Date.now() / 1000) + 3 * 24 * 3600;
    const body = {
      error: {
        type: "usage_limit_reached",
        message: "The usage limit has been reached",
        plan_type: "plus",
        resets_at: resetsAt,
      },
    };
    const c = await newCase([errorTurn(429, body)]);
    const run = await runCodex(c);

    assert.equal(run.code, 1);
    assert.equal(run.outcome.sawResult, true);
    assert.equal(run.outcome.finalMessage, null);
    assert.equal(run.outcome.error?.kind, "rate_limit");
    assert.match(run.outcome.limit?.message ?? "", /hit your usage limit/);
    // "try again at Mar 17th, 2030 5:46 PM": minute precision.
    assert.equal(run.outcome.limit?.resetAt?.getTime(), Math.floor(resetsAt / 60) * 60_000);
  });

  test("401: an auth outcome; 500: an api outcome; neither is a limit", async () => {
    const auth = await newCase([
      errorTurn(401, {
        error: { message: "Incorrect API key provided: test.", type: "invalid_request_error", code: "invalid_api_key" },
      }),
    ]);
    const server = await newCase([errorTurn(500, { error: { message: "boom", type: "server_error" } })]);
    const [authRun, serverRun] = await Promise.all([runCodex(auth), runCodex(server)]);

    assert.equal(authRun.outcome.error?.kind, "auth", JSON.stringify(authRun.outcome));
    assert.match(authRun.outcome.error?.message ?? "", /401/);
    assert.equal(serverRun.outcome.error?.kind, "api", JSON.stringify(serverRun.outcome));
    for (const run of [authRun, serverRun]) {
      assert.equal(run.code, 1);
      assert.equal(run.outcome.limit, undefined);
      assert.equal(run.outcome.finalMessage, null);
      assert.match(run.outcome.sessionId ?? "", /^[0-9a-f-]{36}$/);
    }
    assert.equal(existsSync(join(auth.cwd, "hello.txt")), false);
  });
});
