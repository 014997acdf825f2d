// Reading append-only files a chunk at a time, forwards and backwards: lines across chunk edges, lines too
// long to keep, a last line still being written.
import { test } from "node:test";
import assert from "node:assert/strict";
import { appendFileSync, closeSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  CHUNK_BYTES,
  completeEnd,
  completeEndSync,
  ForwardLines,
  linesBackward,
  linesBackwardSync,
  openLog,
  openLogSync,
} from "../../src/store/file-lines.js";
import { quickStart } from "../../src/cli/quick-start.js";

function withFile(text: string, body: (file: string) => Promise<void>): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "ralph-lines-"));
  const file = join(dir, "events.jsonl");
  writeFileSync(file, text);
  return body(file).finally(() => rmSync(dir, { recursive: true, force: true }));
}

async function forward(file: string, maxLine?: number): Promise<string[]> {
  const reader = new ForwardLines(file, 0, maxLine);
  const all: string[] = [];
  for (let lines = await reader.next(); lines !== null; lines = await reader.next()) all.push(...lines);
  return all;
}

async function backward(file: string, maxLine?: number): Promise<Array<{ text: string; start: number }>> {
  const handle = await openLog(file);
  assert.ok(handle);
  try {
    const all = [];
    for await (const lines of linesBackward(handle, await completeEnd(handle), maxLine)) all.push(...lines);
    return all;
  } finally {
    await handle.close();
  }
}

/** The same, read synchronously (as `ralph status` reads): it must give the very same lines. */
function backwardSync(file: string, maxLine?: number): Array<{ text: string; start: number }> {
  const fd = openLogSync(file);
  assert.ok(fd !== null);
  try {
    const all = [];
    for (const lines of linesBackwardSync(fd, completeEndSync(fd), maxLine)) all.push(...lines);
    return all;
  } finally {
    closeSync(fd);
  }
}

// Lines of every length around the chunk size, so that edges fall inside lines and on newlines.
const LINES = [
  "first",
  "a".repeat(CHUNK_BYTES - 3),
  "",
  "b".repeat(CHUNK_BYTES),
  "c".repeat(2 * CHUNK_BYTES + 7),
  "ünïcode ✓",
  "last",
];

test("forwards and backwards give the same complete lines, with where each starts; a last line without its newline waits", async () => {
  await withFile(`${LINES.join("\n")}\nhalf-writ`, async (file) => {
    assert.deepEqual(await forward(file), LINES);
    const back = await backward(file);
    assert.deepEqual(
      back.map((line) => line.text),
      [...LINES].reverse(),
    );
    let start = 0;
    const starts = LINES.map((line) => ((start += Buffer.byteLength(line) + 1), start - Buffer.byteLength(line) - 1));
    assert.deepEqual(
      back.map((line) => line.start),
      [...starts].reverse(),
    );
    assert.deepEqual(backwardSync(file), back);
  });
});

test("a line longer than the limit is skipped whole, forwards and backwards; the lines around it are kept", async () => {
  await withFile(`keep 1\n${"x".repeat(3 * CHUNK_BYTES)}\nkeep 2\n`, async (file) => {
    assert.deepEqual(await forward(file, CHUNK_BYTES), ["keep 1", "keep 2"]);
    assert.deepEqual(
      (await backward(file, CHUNK_BYTES)).map((line) => line.text),
      ["keep 2", "keep 1"],
    );
    assert.deepEqual(backwardSync(file, CHUNK_BYTES), await backward(file, CHUNK_BYTES));
  });
});

test("a follower gets a line once its newline is written, and only once", async () => {
  await withFile("one\ntw", async (file) => {
    const reader = new ForwardLines(file);
    assert.deepEqual(await reader.next(), ["one"]);
    assert.equal(await reader.next(), null);
    appendFileSync(file, "o\nthree\n");
    assert.deepEqual(await reader.next(), ["two", "three"]);
    assert.equal(reader.position, Buffer.byteLength("one\ntwo\nthree\n"));
  });
});

test("the quick start answers only the exact shapes it knows; anything else goes to the full CLI", () => {
  assert.deepEqual(quickStart(["--version"]), { kind: "version" });
  assert.deepEqual(quickStart(["hook", "handle"]), { kind: "hook-handle" });
  assert.deepEqual(quickStart(["status"]), { kind: "status", run: undefined, json: false });
  assert.deepEqual(quickStart(["status", "--json", "r1"]), { kind: "status", run: "r1", json: true });
  assert.deepEqual(quickStart(["list"]), { kind: "list", active: false, json: false });
  assert.deepEqual(quickStart(["list", "--active", "--json"]), { kind: "list", active: true, json: true });
  for (const argv of [
    ["--version", "x"],
    ["status", "--help"],
    ["status", "a", "b"],
    ["status", "--json", "--json"],
    ["hook", "handle", "--", "x"],
    ["list", "--help"],
    ["list", "r1"],
    [],
  ]) {
    assert.deepEqual(quickStart(argv), { kind: "full" }, argv.join(" "));
  }
});
