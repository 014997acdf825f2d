// readRegularText (src/store/regular-file.ts), the text of a run file read through one kept buffer: the same
// text as readRegular gives, for files that fit the buffer, that do not, and one after another; and the same
// refusals (a link, a FIFO, a directory, a file over the limit).
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { readRegular, readRegularText, RunFileError } from "../../src/store/regular-file.js";

const dir = mkdtempSync(join(tmpdir(), "ralph-regular-text-"));
after(() => rmSync(dir, { recursive: true, force: true }));

describe("readRegularText", () => {
  test("gives readRegular's text for files small, empty, multi-byte and larger than its buffer, read one after another", () => {
    const texts = [
      "{}",
      "",
      "é ✓ 日本".repeat(10),
      "x".repeat(64 * 1024 - 1),
      "y".repeat(64 * 1024),
      "z".repeat(200 * 1024),
      "short again",
    ];
    texts.forEach((text, index) => {
      const file = join(dir, `f${index}`);
      writeFileSync(file, text);
      assert.equal(readRegularText(file), text, `file ${index}`);
      assert.equal(readRegularText(file), readRegular(file).toString("utf8"), `file ${index}`);
    });
  });

  test("refuses a file over the limit, a link, a FIFO and a directory, as readRegular does", () => {
    const big = join(dir, "big");
    writeFileSync(big, "a".repeat(2000));
    assert.throws(() => readRegularText(big, 1000), RunFileError);
    assert.equal(readRegularText(big, 2000).length, 2000);
    const link = join(dir, "link");
    symlinkSync(big, link);
    assert.throws(() => readRegularText(link), RunFileError);
    const fifo = join(dir, "fifo");
    execFileSync("mkfifo", [fifo]);
    assert.throws(() => readRegularText(fifo), RunFileError);
    const sub = join(dir, "sub");
    mkdirSync(sub);
    assert.throws(() => readRegularText(sub), RunFileError);
  });
});
