// tailLines: complete lines only, from an offset, through appends, a late file and a truncation.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { appendFileSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { tailLines } from "../../src/ui/file-tail.js";
import { waitFor } from "../helpers/wait.js";

test("tailLines reads what is there, then each appended complete line, once", async () => {
  const dir = mkdtempSync(join(tmpdir(), "ralph-tail-"));
  const file = join(dir, "events.jsonl");
  const lines: string[] = [];
  const ends: number[] = [];
  const tail = tailLines(file, 0, (got, end) => {
    lines.push(...got);
    ends.push(end);
  });
  try {
    assert.deepEqual(lines, [], "no file yet");
    writeFileSync(file, "one\ntwo\nhal");
    await waitFor(() => lines.length === 2, "the first two lines", 5000);
    assert.deepEqual(lines, ["one", "two"], "a line without its newline waits");
    appendFileSync(file, "f\nthree\n");
    await waitFor(() => lines.length === 4, "the rest", 5000);
    assert.deepEqual(lines, ["one", "two", "half", "three"]);
    assert.equal(ends.at(-1), Buffer.byteLength("one\ntwo\nhalf\nthree\n"));
    writeFileSync(file, "new\n"); // replaced by a shorter file: start over
    await waitFor(() => lines.length === 5, "the replaced file", 5000);
    assert.equal(lines[4], "new");
  } finally {
    tail.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test("tailLines starts at the offset given", () => {
  const dir = mkdtempSync(join(tmpdir(), "ralph-tail-"));
  const file = join(dir, "log");
  writeFileSync(file, "skip\nkeep\n");
  const lines: string[] = [];
  const tail = tailLines(file, 5, (got) => lines.push(...got));
  tail.close();
  rmSync(dir, { recursive: true, force: true });
  assert.deepEqual(lines, ["keep"]);
});

test("tailLines shows nothing through a planted link, and never blocks on a FIFO", async () => {
  const dir = mkdtempSync(join(tmpdir(), "ralph-tail-"));
  const secret = join(dir, "secret");
  writeFileSync(secret, "a line the dashboard must not show\n");
  const linked = join(dir, "events.jsonl");
  symlinkSync(secret, linked);
  const fifo = join(dir, "run.log");
  execFileSync("mkfifo", [fifo]);
  const lines: string[] = [];
  const tails = [linked, fifo].map((file) => tailLines(file, 0, (got) => lines.push(...got)));
  try {
    // Control: the same file read directly has the line, so an empty tail means it was refused.
    const direct = tailLines(secret, 0, (got) => lines.push(...got));
    await waitFor(() => lines.length === 1, "the control's line", 5000);
    direct.close();
    assert.deepEqual(lines, ["a line the dashboard must not show"]);
  } finally {
    tails.forEach((tail) => tail.close());
    rmSync(dir, { recursive: true, force: true });
  }
});
