// The quick files load through the V8 code cache the build wrote beside them; a cache of another
// build, or one V8 refuses, is never run: the file is then compiled from its own text.
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { BUILD_MARK, codeCacheFor, compileCommonJs, requireCached, runCommonJs } from "../../src/cli/cached-require.js";

const QUICK_FILES = ["quick-status.cjs", "quick-hook.cjs"].map((name) =>
  fileURLToPath(new URL(`../../src/cli/${name}`, import.meta.url)),
);
const CACHED_REQUIRE = new URL("../../src/cli/cached-require.js", import.meta.url).href;
const root = mkdtempSync(join(tmpdir(), "ralph-cached-require-"));
after(() => rmSync(root, { recursive: true, force: true }));

/** A CommonJS file of a build (`mark`) exporting `answer`, n → n × `times` + 1. */
function writeFile(name: string, mark: string, times = 2): string {
  const file = join(root, name);
  writeFileSync(
    file,
    `"use strict";\nfunction answer(n) { return n * ${times} + 1; }\nmodule.exports = { answer };\n${mark}\n`,
  );
  return file;
}

/** The cache V8 makes of `file` after one call (the file is then compiled in this process: V8 keeps it). */
function cacheOf(file: string): Buffer {
  const script = compileCommonJs(file, readFileSync(file, "utf8"), undefined);
  (runCommonJs(script, file, createRequire(file)) as Answer).answer(20);
  return script.createCachedData();
}

interface Answer {
  answer(n: number): number;
}

describe("code cache", () => {
  test("the build wrote each quick file a cache of its own, and this Node takes it", () => {
    for (const file of QUICK_FILES) {
      const source = readFileSync(file, "utf8");
      const cache = codeCacheFor(file, source);
      assert.ok(cache && cache.length > 5_000, `${file}: a cache of ${cache?.length ?? 0} bytes`);
      assert.equal(compileCommonJs(file, source, cache).cachedDataRejected, false, file);
    }
  });

  test("the full CLI's cache is taken under the flag main.cjs sets before compiling it, and refused without it", () => {
    const file = fileURLToPath(new URL("../../src/cli/full.cjs", import.meta.url));
    // In processes of their own: the flag is process-wide, and this one has not compiled the file.
    const probe = (
      flag: boolean,
    ) => `import { readFileSync } from "node:fs"; import { setFlagsFromString } from "node:v8";
      const { codeCacheFor, compileCommonJs } = await import(${JSON.stringify(CACHED_REQUIRE)});
      ${flag ? 'setFlagsFromString("--semi-space-growth-factor=1");' : ""}
      const file = ${JSON.stringify(file)}; const source = readFileSync(file, "utf8"); const cache = codeCacheFor(file, source);
      console.log(JSON.stringify({ bytes: cache?.length ?? 0, rejected: compileCommonJs(file, source, cache).cachedDataRejected }));`;
    const taken = spawnSync(process.execPath, ["--input-type=module", "-e", probe(true)], {
      encoding: "utf8",
      timeout: 20_000,
    });
    const seen = JSON.parse(taken.stdout || "null") as { bytes: number; rejected: boolean };
    assert.ok(seen.bytes > 100_000, `a cache of ${seen.bytes} bytes`);
    assert.equal(seen.rejected, false, taken.stderr);
    // Control: the same cache without the flag, which V8 counts among the flags a cache must match.
    const refused = spawnSync(process.execPath, ["--input-type=module", "-e", probe(false)], {
      encoding: "utf8",
      timeout: 20_000,
    });
    assert.equal((JSON.parse(refused.stdout || "null") as { rejected: boolean }).rejected, true, refused.stderr);
  });

  test("another build's cache is never used, though V8 would run it for a file of the same length", () => {
    const old = writeFile("old.cjs", `${BUILD_MARK}aaaa`);
    const cache = cacheOf(old);
    // This build's file: as long as the old one, its code different.
    const file = writeFile("new.cjs", `${BUILD_MARK}bbbb`, 3);
    assert.equal(readFileSync(file).length, readFileSync(old).length);
    writeFileSync(`${file}.cache`, Buffer.concat([Buffer.from(`${BUILD_MARK}aaaa\n`), cache]));
    const source = readFileSync(file, "utf8");
    assert.equal(codeCacheFor(file, source), undefined);
    assert.equal((requireCached(file, createRequire(file)) as Answer).answer(20), 61);
    // Control, in a process of its own (this one has compiled the file: V8 would answer from memory): given
    // that cache anyway, V8 takes it and runs the old build's code.
    const control = `import { readFileSync } from "node:fs"; import { createRequire } from "node:module";
      const { compileCommonJs, runCommonJs } = await import(${JSON.stringify(CACHED_REQUIRE)});
      const file = ${JSON.stringify(file)}; const cache = readFileSync(file + ".cache"); const body = cache.subarray(cache.indexOf(10) + 1);
      const script = compileCommonJs(file, readFileSync(file, "utf8"), body);
      console.log(JSON.stringify({ rejected: script.cachedDataRejected, answer: runCommonJs(script, file, createRequire(file)).answer(20) }));`;
    const stale = spawnSync(process.execPath, ["--input-type=module", "-e", control], {
      encoding: "utf8",
      timeout: 20_000,
    });
    assert.deepEqual(JSON.parse(stale.stdout || "null"), { rejected: false, answer: 41 }, stale.stderr);
  });

  test("a cache under the file's own mark is the one V8 gets", () => {
    const file = writeFile("own.cjs", `${BUILD_MARK}cccc`);
    const cache = cacheOf(file);
    writeFileSync(`${file}.cache`, Buffer.concat([Buffer.from(`${BUILD_MARK}cccc\n`), cache]));
    assert.deepEqual(codeCacheFor(file, readFileSync(file, "utf8")), cache);
  });

  test("a file without a mark, or without a cache, is compiled from its text", () => {
    const file = writeFile("unmarked.cjs", "// no mark");
    writeFileSync(`${file}.cache`, Buffer.concat([Buffer.from("// no mark\n"), cacheOf(file)]));
    assert.equal(codeCacheFor(file, readFileSync(file, "utf8")), undefined);
    const bare = writeFile("bare.cjs", `${BUILD_MARK}dddd`);
    assert.equal(codeCacheFor(bare, readFileSync(bare, "utf8")), undefined);
    assert.equal((requireCached(bare, createRequire(bare)) as Answer).answer(1), 3);
  });

  test("a cache V8 refuses (not one of its caches) is not run: the file works from its text", () => {
    // Never compiled in this process before: V8 would otherwise answer from its own memory, not the cache.
    const file = writeFile("refused.cjs", `${BUILD_MARK}eeee`, 4);
    writeFileSync(`${file}.cache`, Buffer.concat([Buffer.from(`${BUILD_MARK}eeee\n`), Buffer.alloc(4096, 7)]));
    const source = readFileSync(file, "utf8");
    assert.equal(compileCommonJs(file, source, codeCacheFor(file, source)).cachedDataRejected, true);
    assert.equal((requireCached(file, createRequire(file)) as Answer).answer(5), 21);
  });
});
