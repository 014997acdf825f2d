// The source keeps its layers: no import runs from a lower folder up to a higher one, and no files import
// each other in a cycle (scripts/import-graph.mjs counts both).
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { tmpdir } from "node:os";
import { join } from "node:path";

interface Graph {
  files: number;
  upward: string[];
  cycles: string[][];
  unknown_folders: string[];
}

function graphOf(dir: string): Graph {
  const run = spawnSync(process.execPath, ["scripts/import-graph.mjs", dir, "--json"], { encoding: "utf8" });
  return JSON.parse(run.stdout) as Graph;
}

test("src has no upward import, no import cycle and no folder without a layer", () => {
  const graph = graphOf("src");
  assert.ok(graph.files > 100, `expected the whole source, counted ${graph.files} files`);
  assert.deepEqual(graph.upward, []);
  assert.deepEqual(graph.cycles, []);
  assert.deepEqual(graph.unknown_folders, []);
});

test("control: the counter does see an upward import and a cycle when there is one", () => {
  const dir = mkdtempSync(join(tmpdir(), "ralph-graph-"));
  try {
    for (const folder of ["util", "store"]) mkdirSync(join(dir, folder));
    writeFileSync(join(dir, "util", "a.ts"), 'import { b } from "../store/b.js";\nexport const a = b;\n');
    writeFileSync(join(dir, "store", "b.ts"), 'import { a } from "../util/a.js";\nexport const b = 1;\nvoid a;\n');
    const graph = graphOf(dir);
    assert.deepEqual(graph.upward, ["util/a.ts -> store/b.ts"]);
    assert.deepEqual(graph.cycles, [["store/b.ts", "util/a.ts"]]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a reader that stops after the first line (| head -1) ends the counter quietly, exit 0", () => {
  // `sh -c` gives the counter a pipe whose reader is gone once it has read one line.
  const run = spawnSync("sh", ["-c", `'${process.execPath}' scripts/import-graph.mjs | head -1`], { encoding: "utf8" });
  assert.match(run.stdout, /^\d+ files, /);
  assert.equal(run.stderr, "", "no EPIPE error");
});
