// spawnAgent with real processes.
import { describe, it, after } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spawnAgent, type AgentProcess } from "../../src/process/spawn-agent.js";
import { readProcess } from "../../src/process/proc-table.js";
import { FIXTURES, MARKER_KEY, killCarriers, liveCarriers, newMarker } from "../fixtures/tree-harness.js";
import { waitForLine } from "../helpers/wait.js";

const dir = mkdtempSync(join(tmpdir(), "ralph-spawn-"));
const markers: Array<{ key: string; value: string }> = [];
after(() => {
  for (const marker of markers) killCarriers(marker);
  rmSync(dir, { recursive: true, force: true });
});

function marker() {
  const value = newMarker();
  markers.push(value);
  return value;
}

async function start(
  argv: string[],
  stdin: string | null = null,
): Promise<{ agent: AgentProcess; marker: { key: string; value: string } }> {
  const tag = marker();
  const result = await spawnAgent({ argv, cwd: dir, env: process.env, stdin, marker: tag });
  assert.ok(result.ok, result.ok ? "" : result.message);
  return { agent: result.agent, marker: tag };
}

function collect(stream: NodeJS.ReadableStream): Promise<string> {
  return new Promise((resolve) => {
    let text = "";
    stream.on("data", (chunk: Buffer) => (text += chunk.toString("utf8")));
    stream.on("end", () => resolve(text));
  });
}

const POLITE = { graceMs: 1000, politeSignals: ["SIGINT", "SIGTERM"] as NodeJS.Signals[], politeGapMs: 100 };

describe("spawnAgent", () => {
  it("reports a missing program, a non-executable file and a missing directory as values", async () => {
    const missing = await spawnAgent({
      argv: [join(dir, "no-such-agent")],
      cwd: dir,
      env: process.env,
      stdin: null,
      marker: marker(),
    });
    assert.deepEqual(missing.ok ? null : missing.error, "not_found");
    const plain = join(dir, "plain.txt");
    writeFileSync(plain, "not a program\n", { mode: 0o644 });
    const denied = await spawnAgent({ argv: [plain], cwd: dir, env: process.env, stdin: null, marker: marker() });
    assert.deepEqual(denied.ok ? null : denied.error, "not_executable");
    const nowhere = await spawnAgent({
      argv: ["true"],
      cwd: join(dir, "nope"),
      env: process.env,
      stdin: null,
      marker: marker(),
    });
    assert.deepEqual(nowhere.ok ? null : nowhere.error, "spawn_failed");
    const empty = await spawnAgent({ argv: [], cwd: dir, env: process.env, stdin: null, marker: marker() });
    assert.equal(empty.ok, false);
  });

  it("passes argv without a shell and the prompt on stdin, byte for byte", async () => {
    const prompt = "fix $HOME `rm -rf` * && echo 'x' \"y\" é\n".repeat(5000);
    const { agent } = await start(["sh", "-c", 'cat; printf "%s|" "$@"', "sh", "$HOME", "*", "a b"], prompt);
    const [out, exit] = await Promise.all([collect(agent.stdout), agent.exited]);
    assert.deepEqual(exit, { code: 0, signal: null });
    assert.equal(out, `${prompt}$HOME|*|a b|`);
  });

  it("gives null stdin as an immediate end of input, never the terminal", async () => {
    const { agent } = await start(["sh", "-c", "cat; readlink /proc/self/fd/0"]);
    const [out, exit] = await Promise.all([collect(agent.stdout), agent.exited]);
    assert.equal(exit.code, 0);
    assert.equal(out.trim(), "/dev/null");
  });

  it("runs the agent in its own session with the marker in its environment", async () => {
    const { agent, marker: tag } = await start(["sh", "-c", `printf %s "$${MARKER_KEY}"; exec sleep 1000`]);
    const out = await new Promise<string>((resolve) =>
      agent.stdout.once("data", (chunk: Buffer) => resolve(chunk.toString())),
    );
    assert.equal(out, tag.value);
    const info = readProcess(agent.pid);
    assert.ok(info !== null);
    assert.equal(info.sid, agent.pid);
    assert.notEqual(info.sid, readProcess(process.pid)?.sid);
    const report = await agent.end(POLITE);
    assert.equal(report.found, 1);
    assert.deepEqual(await agent.exited, { code: null, signal: "SIGINT" });
  });

  it("end() after the root exited reaps leftovers (a background server holding the output pipe), and is safe twice", async () => {
    const { agent, marker: tag } = await start(["sh", "-c", "sleep 1000 & echo $!"]);
    const out = collect(agent.stdout);
    assert.equal((await agent.exited).code, 0);
    assert.equal(liveCarriers(tag).length, 1, "the leftover runs after the root exited");
    assert.ok((agent.inventory?.identities().length ?? 0) >= 1, "the inventory saw the leftover");
    const first = await agent.end(POLITE);
    assert.equal(first.found, 1);
    assert.deepEqual(liveCarriers(tag), []);
    assert.match(await out, /^\d+\n$/);
    await agent.closed;
    const second = await agent.end(POLITE);
    assert.equal(second.found, 0);
  });

  it("concurrent end() calls (interrupt, then the after-exit reap) both finish and leave nothing", async () => {
    const tag = marker();
    const result = await spawnAgent({
      argv: [process.execPath, join(FIXTURES, "tree-fixture.js"), "mixed", join(dir, "mixed-pids")],
      cwd: dir,
      env: process.env,
      stdin: null,
      marker: tag,
    });
    assert.ok(result.ok);
    await waitForLine(result.agent.stdout, "READY ");
    const first = result.agent.end({ ...POLITE, graceMs: 300 });
    await result.agent.exited;
    const second = result.agent.end({ ...POLITE, graceMs: 300 });
    const reports = await Promise.all([first, second]);
    assert.equal(reports[0].found, 12);
    assert.deepEqual(
      reports.map((report) => report.survivors),
      [0, 0],
    );
    assert.deepEqual(liveCarriers(tag), []);
  });
});
