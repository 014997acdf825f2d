// iter-NNN.log: what the agent printed reaches the file (redacted), and end() leaves no descriptor open.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
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
});
