// Loads one of the CLI's own CommonJS files with the V8 code cache the build wrote beside it (FILE.cache):
// V8 then skips parsing and compiling the functions the cache holds. The cache is as trusted as the file
// itself: the build writes both into ralph's own directory, where whoever can replace the cache can
// replace the code. Its first line is the build's mark, which the file's last line must repeat: a cache
// from another build is never used, even one V8 would take (it checks the source's length, not its text).
// V8 itself refuses a cache made by another version or with other flags; the file is then compiled as usual.
// A file run this way has no import(): Node 20 gives a vm script none without an experimental flag, so what
// a quick file imports dynamically comes from its caller (fast-start.ts).
import { readFileSync } from "node:fs";
import { dirname } from "node:path";
import type { Script } from "node:vm";
import { requireBuiltin } from "../util/require-builtin.js";

/** The prefix of the last line of a file built with a cache, and of its cache's first line. */
export const BUILD_MARK = "//# ralph-build ";

/** The file's code cache, or undefined when there is none for this build of `source`. */
export function codeCacheFor(file: string, source: string): Buffer | undefined {
  let cache: Buffer;
  try {
    cache = readFileSync(`${file}.cache`);
  } catch {
    return undefined;
  }
  const end = cache.indexOf(10);
  if (end < 0) return undefined;
  const mark = cache.subarray(0, end).toString("latin1");
  return mark.startsWith(BUILD_MARK) && source.endsWith(`\n${mark}\n`) ? cache.subarray(end + 1) : undefined;
}

/** `file` as Node would wrap it, compiled with `cache` when given (`cachedDataRejected` says whether V8 took it). */
export function compileCommonJs(file: string, source: string, cache: Buffer | undefined): Script {
  const { Script: CompiledScript } = requireBuiltin("node:vm") as typeof import("node:vm");
  return new CompiledScript(`(function (exports, require, module, __filename, __dirname) {${source}\n})`, {
    filename: file,
    cachedData: cache,
  });
}

/** Runs a compiled file as a CommonJS module whose require() is `load`; its exports. */
export function runCommonJs(script: Script, file: string, load: NodeJS.Require): unknown {
  const module = { exports: {} };
  (script.runInThisContext() as (...args: unknown[]) => void)(module.exports, load, module, file, dirname(file));
  return module.exports;
}

/** require(file), through its code cache when there is one for it. */
export function requireCached(file: string, load: NodeJS.Require): unknown {
  const source = readFileSync(file, "utf8");
  return runCommonJs(compileCommonJs(file, source, codeCacheFor(file, source)), file, load);
}
