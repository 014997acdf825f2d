// The runner's watch of its control files makes the run's requests directory, a real one: a link planted
// under that name (by an agent, before a `ralph continue`) is replaced, and what it pointed to is left alone.
import { test } from "node:test";
import assert from "node:assert/strict";
import { lstatSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { watchControl } from "../../src/control/control-watch.js";
import { runPaths } from "../../src/store/run-paths.js";

test("a link where the requests directory goes is replaced by a directory of the runner's own (0700)", () => {
  const root = mkdtempSync(join(tmpdir(), "ralph-control-watch-"));
  try {
    const paths = runPaths(root, "r");
    mkdirSync(paths.dir, { recursive: true });
    const elsewhere = join(root, "elsewhere");
    mkdirSync(elsewhere);
    writeFileSync(join(elsewhere, "kept.txt"), "x");
    symlinkSync(elsewhere, paths.requests);
    const watch = watchControl(paths, () => undefined);
    watch.close();
    const made = lstatSync(paths.requests);
    assert.ok(made.isDirectory() && !made.isSymbolicLink(), "a real directory");
    assert.equal(made.mode & 0o777, 0o700);
    assert.deepEqual(readdirSync(elsewhere), ["kept.txt"]);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
