// iter-NNN.log: what the agent printed reaches the file (redacted), and end() leaves no descriptor open.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { closeSync, constants, mkdtempSync, openSync, readdirSync, readFileSync, readSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { Redactor } from "../../src/redact/redactor.js";
import { IterationLog } from "../../src/store/iteration-log.js";
import { WriteGuard } from "../../src/store/write-guard.js";

const openDescriptors = () => readdirSync("/proc/self/fd").length;

describe("IterationLog", { skip: process.platform === "linux" ? false : "counts descriptors through /proc" }, () => {
  test("end() flushes every chunk and closes the file, run after run", async () => {
    const dir = mkdtempSync(join(tmpdir(), "ralph-iter-log-"));
    try {
      const before = openDescriptors();
      for (let iteration = 1; iteration <= 20; iteration++) {
        const file = join(dir, `iter-${String(iteration).padStart(3, "0")}.log`);
        const log = new IterationLog(file, new Redactor({ SOME_TOKEN: "secret-value-123" }), new WriteGuard());
        const source = new PassThrough();
        log.write(source, Buffer.from(`line ${iteration}\n`));
        log.write(source, Buffer.from("token secret-value-123 end\n"));
        await log.end();
        assert.equal(readFileSync(file, "utf8"), `line ${iteration}\ntoken [REDACTED] end\n`);
      }
      assert.equal(openDescriptors(), before);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  // A disk that takes writes slowly: the log is a FIFO that this test empties 16 KB at a time, while a real
  // process prints 16 MB as fast as it can. What the runner holds (read from the agent, not yet written)
  // must stay bounded: the agent's stdout is paused instead. The control runs the same with pause() undone.
  const TOTAL = 16 * 1024 * 1024;
  const BOUND = 1024 * 1024;

  async function heldWhileSlowDisk(honourPause: boolean): Promise<{ mostHeld: number; written: number }> {
    const dir = mkdtempSync(join(tmpdir(), "ralph-slow-log-"));
    const fifo = join(dir, "slow-disk");
    execFileSync("mkfifo", [fifo]);
    const reader = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
    const log = new IterationLog(openSync(fifo, constants.O_WRONLY), new Redactor({}), new WriteGuard());
    const agent = spawn(
      process.execPath,
      [
        "-e",
        `const b = Buffer.alloc(1 << 20, 120); for (let i = 0; i < ${TOTAL >> 20}; i++) require("fs").writeSync(1, b);`,
      ],
      { stdio: ["ignore", "pipe", "inherit"] },
    );
    const source = agent.stdout;
    if (!honourPause) source.pause = () => source;
    let received = 0;
    let written = 0;
    let mostHeld = 0;
    let ended = false;
    source.on("data", (chunk: Buffer) => {
      received += chunk.length;
      mostHeld = Math.max(mostHeld, received - written);
      log.write(source, chunk);
    });
    source.once("end", () => void log.end().then(() => (ended = true)));
    const kill = setTimeout(() => agent.kill("SIGKILL"), 60_000);
    const step = Buffer.alloc(16 * 1024);
    try {
      // Each turn of the event loop empties at most 16 KB of the FIFO: the agent prints faster than that.
      while (!ended || written < received) {
        try {
          written += readSync(reader, step, 0, step.length, null);
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== "EAGAIN") throw error;
        }
        await new Promise((resolve) => setImmediate(resolve));
      }
    } finally {
      clearTimeout(kill);
      closeSync(reader);
      rmSync(dir, { recursive: true, force: true });
    }
    return { mostHeld, written };
  }

  test("a slow disk pauses the agent's output instead of holding it in memory (real pipe, real FIFO)", async () => {
    const slow = await heldWhileSlowDisk(true);
    assert.equal(slow.written, TOTAL, "every byte reaches the log");
    assert.ok(slow.mostHeld <= BOUND, `held at most ${slow.mostHeld} bytes (bound ${BOUND})`);
    // Control: the same agent and disk with the pause ignored piles the output up in the runner.
    const control = await heldWhileSlowDisk(false);
    assert.equal(control.written, TOTAL);
    assert.ok(control.mostHeld > 4 * BOUND, `without the pause, ${control.mostHeld} bytes were held`);
  });
});
