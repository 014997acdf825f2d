// The Stop hook reads its stdin through the descriptor, not `process.stdin`: whatever stdin is (a socket, a
// pipe, a file, a descriptor another process made non-blocking), it gets the whole input, and an input that
// never ends is given up on.
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawn, type ChildProcessByStdio } from "node:child_process";
import type { Readable, Writable } from "node:stream";
import { mkdtempSync, openSync, closeSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { inTerminal } from "../fixtures/terminal.js";
import { cleanEnv } from "../helpers/cli.js";

const CHILD = fileURLToPath(new URL("../fixtures/read-stdin-child.js", import.meta.url));
const HOOK_CHILD = fileURLToPath(new URL("../fixtures/hook-handle-child.js", import.meta.url));
const root = mkdtempSync(join(tmpdir(), "ralph-read-stdin-"));
after(() => rmSync(root, { recursive: true, force: true }));

// Several reads' worth of characters of two and four UTF-8 bytes, written in pieces that split them.
const TEXT = `${"é🙂x".repeat(40_000)}\n{"session_id":"s"}`;
const BYTES = Buffer.from(TEXT, "utf8");

/** Asserts the child read exactly TEXT (without printing a quarter megabyte when it did not). */
function readWhole(result: { text?: string; error?: string }): void {
  assert.ok(
    result.text === TEXT,
    `read ${result.text?.length ?? 0} characters of ${TEXT.length}${result.error ? `: ${result.error}` : ""}`,
  );
}

interface Child {
  ready: Promise<string>;
  /** The first line the child wrote to stdout (its answer), while it may still run. */
  answer: Promise<string>;
  running(): boolean;
  /** The signal that ended the child, or "exit N". */
  ended: Promise<string>;
  result: Promise<{ text?: string; error?: string }>;
  write(bytes: Buffer | string): void;
  end(): void;
}

/** The child script with `stdin` as its standard input ("pipe": a socket this test writes to). */
function child(
  stdin: "pipe" | number,
  env: Record<string, string> = {},
  program: string[] = [process.execPath, CHILD],
): Child {
  const proc = spawn(program[0] as string, program.slice(1), {
    env: cleanEnv(env),
    stdio: [stdin, "pipe", "pipe"],
  }) as ChildProcessByStdio<Writable | null, Readable, Readable>;
  // SIGTERM: only the hook ending itself is a SIGKILL.
  const timer = setTimeout(() => proc.kill("SIGTERM"), 20_000);
  let stdout = "";
  let stderr = "";
  // Decoded as a stream: a character split between two chunks stays whole.
  proc.stdout.setEncoding("utf8");
  proc.stderr.setEncoding("utf8");
  const answer = new Promise<string>((resolve) =>
    proc.stdout.on("data", (chunk: string) => (stdout += chunk).includes("\n") && resolve(stdout.split("\n")[0] ?? "")),
  );
  const ready = new Promise<string>((resolve) =>
    proc.stderr.on("data", (chunk: string) => (stderr += chunk).includes("\n") && resolve(stderr.split("\n")[0] ?? "")),
  );
  const result = new Promise<{ text?: string; error?: string }>((resolve, reject) =>
    proc.on("close", (code) => {
      clearTimeout(timer);
      try {
        assert.equal(code, 0, stderr);
        resolve(JSON.parse(stdout) as { text?: string; error?: string });
      } catch (error) {
        reject(error instanceof Error ? error : new Error(String(error)));
      }
    }),
  );
  const ended = new Promise<string>((resolve) => proc.on("exit", (code, signal) => resolve(signal ?? `exit ${code}`)));
  return {
    ready,
    answer,
    ended,
    running: () => proc.exitCode === null && proc.signalCode === null,
    result,
    write: (bytes) => proc.stdin?.write(bytes),
    end: () => proc.stdin?.end(),
  };
}

describe("readStdin", () => {
  test("a socket written in pieces (how a Node parent such as Claude Code feeds a hook): the whole text", async () => {
    const reader = child("pipe");
    assert.equal(await reader.ready, "ready terminal=false");
    for (let at = 0; at < BYTES.length; at += 50_001) reader.write(BYTES.subarray(at, at + 50_001));
    reader.end();
    readWhole(await reader.result);
  });

  test("a file, a shell pipe and /dev/null", async () => {
    const file = join(root, "input.json");
    writeFileSync(file, TEXT);
    const fd = openSync(file, "r");
    try {
      readWhole(await child(fd).result);
    } finally {
      closeSync(fd);
    }
    readWhole(
      await child("pipe", { INPUT: file }, ["sh", "-c", 'cat "$INPUT" | "$0" "$1"', process.execPath, CHILD]).result,
    );
    const empty = openSync("/dev/null", "r");
    try {
      const reader = child(empty);
      assert.equal(await reader.ready, "ready terminal=false");
      assert.deepEqual(await reader.result, { text: "" });
    } finally {
      closeSync(empty);
    }
  });

  test("a descriptor another process made non-blocking, the input arriving after the first read: the whole text", async () => {
    // perl sets O_NONBLOCK on the socket's open file (shared with whoever else holds it), then runs the child.
    const nonBlocking = [
      "perl",
      "-MFcntl",
      "-e",
      "fcntl(STDIN, F_SETFL, fcntl(STDIN, F_GETFL, 0) | O_NONBLOCK) or die; exec @ARGV",
      process.execPath,
      CHILD,
    ];
    const reader = child("pipe", {}, nonBlocking);
    await reader.ready;
    // Nothing to read yet when the first read runs (it was started before "ready"), so it finds none.
    await new Promise((resolve) => setTimeout(resolve, 300));
    reader.write(BYTES.subarray(0, 1001));
    setImmediate(() => {
      reader.write(BYTES.subarray(1001));
      reader.end();
    });
    readWhole(await reader.result);
  });

  test("an input that never ends is given up on at the time limit; the process ends when the input does", async () => {
    const reader = child("pipe", { STDIN_TIMEOUT_MS: "200" });
    await reader.ready;
    reader.write('{"session_id":');
    // The answer comes at the limit, while the input is still open; the process then waits for its end.
    assert.deepEqual(JSON.parse(await reader.answer), { error: "no end of input on stdin within 0.2 s" });
    assert.equal(reader.running(), true);
    reader.end();
    assert.deepEqual(await reader.result, { error: "no end of input on stdin within 0.2 s" });
  });

  test("the Stop hook, its input never ending, answers at the time limit and then ends itself", async () => {
    const hook = child("pipe", { STDIN_TIMEOUT_MS: "200" }, [process.execPath, HOOK_CHILD]);
    await hook.ready;
    hook.write('{"session_id":');
    assert.deepEqual(JSON.parse(await hook.answer), {
      systemMessage: "ralph: the Stop hook failed: no end of input on stdin within 0.2 s",
    });
    // Its input still open (the test above shows a bare reader living on), the process is gone.
    assert.equal(await hook.ended, "SIGKILL");
    await assert.rejects(hook.result, /null !== 0|Expected values to be strictly equal/);
    hook.end();
  });

  test("a terminal on stdin is one (ralph hook handle refuses it, exit code 2)", async () => {
    const terminal = inTerminal(root, ["hook", "handle"]);
    const timer = setTimeout(() => terminal.pty.kill("SIGKILL"), 20_000);
    try {
      await terminal.exited;
    } finally {
      clearTimeout(timer);
    }
    assert.match(terminal.output(), /hook handle is run by Claude Code's Stop hook, with the hook's JSON on stdin/);
    assert.match(terminal.output(), /AFTER/);
  });
});
