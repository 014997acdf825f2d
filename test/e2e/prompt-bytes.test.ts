// The prompt reaches the agent byte for byte, in any encoding; prompt files that are not regular files are refused.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fakeAgent, finishWithin, runRalph, startRalph, tempProjects } from "../helpers/cli.js";

const project = tempProjects("ralph-bytes-");

// Latin-1 "café", a lone continuation byte, an overlong NUL and a truncated sequence: none of it is UTF-8.
const NOT_UTF8 = Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a, 0x80, 0xc0, 0x80, 0x20, 0xe2, 0x82, 0x0a]);

test("a non-UTF-8 --prompt-file reaches the agent unchanged, in every iteration and after continue", async () => {
  const dir = project();
  writeFileSync(join(dir, "prompt.bin"), NOT_UTF8);
  const recordFile = join(dir, "received.bin");
  const first = await runRalph(
    ["run", "--name", "b", "-n", "2", "-p", "prompt.bin", ...fakeAgent("--record", recordFile)],
    dir,
  );
  assert.equal(first.code, 3, first.stderr);
  const continued = await runRalph(["continue", "b", "-n", "3"], dir);
  assert.equal(continued.code, 3, continued.stderr);
  const expected = Buffer.concat([NOT_UTF8, Buffer.from([0]), NOT_UTF8, Buffer.from([0]), NOT_UTF8, Buffer.from([0])]);
  const received = readFileSync(recordFile);
  // Known-false control: a lossy decode would have changed the bytes (U+FFFD replacements).
  assert.notDeepEqual(Buffer.from(NOT_UTF8.toString("utf8")), NOT_UTF8);
  assert.deepEqual(received, expected);
});

test("{{task}} is filled in (the whole task) around non-UTF-8 bytes without touching them", async () => {
  const dir = project();
  writeFileSync(join(dir, "TASKS.md"), "- [ ] Tâche\n");
  writeFileSync(join(dir, "prompt.bin"), Buffer.concat([NOT_UTF8, Buffer.from("do {{task}}!"), NOT_UTF8]));
  const recordFile = join(dir, "received.bin");
  const result = await runRalph(
    ["run", "-n", "1", "--tasks", "TASKS.md", "-p", "prompt.bin", ...fakeAgent("--record", recordFile)],
    dir,
  );
  assert.equal(result.code, 3, result.stderr);
  assert.deepEqual(
    readFileSync(recordFile),
    Buffer.concat([
      NOT_UTF8,
      Buffer.from(
        'do line 1: Tâche\n\nThe task list is TASKS.md. When this task is done, tick its box on line 1 there ("- [ ]" becomes "- [x]"), and change nothing else in that file.!',
      ),
      NOT_UTF8,
      Buffer.from([0]),
    ]),
  );
});

test("a FIFO, /dev/zero or an oversized file as prompt file is a usage error at once, with nothing created", async () => {
  const dir = project();
  execFileSync("mkfifo", [join(dir, "fifo")]);
  writeFileSync(join(dir, "huge.md"), Buffer.alloc(9 * 1024 * 1024, 0x61));
  const cases: Array<[string, RegExp]> = [
    // The path as resolved from where it was typed.
    [
      "fifo",
      /^ralph: --prompt-file \/\S+\/fifo: is a FIFO, not a regular file; expected a regular file of at most 8 MB\n$/,
    ],
    ["/dev/zero", /^ralph: --prompt-file \/dev\/zero: is a device, not a regular file; expected a regular file/],
    ["huge.md", /^ralph: --prompt-file \/\S+\/huge\.md: is 9437184 bytes, more than the 8388608 allowed/],
  ];
  for (const [file, message] of cases) {
    const result = await finishWithin(startRalph(["run", "-n", "1", "-p", file, ...fakeAgent()], dir), 20_000);
    assert.equal(result.signal, null, `${file}: ralph did not hang`);
    assert.equal(result.code, 2, `${file}: ${result.stderr}`);
    assert.match(result.stderr, message);
  }
  assert.equal(existsSync(join(dir, ".ralph")), false);
});
