// `ralph list` over thousands of runs lets V8's young generation grow, as a short command that holds what it
// reads should: the full CLI keeps it at its first size for a run streaming output (young-generation.ts),
// and a listing held to 1 MB semi-spaces copied everything it had read through ~120 collections.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cleanEnv, onlyRunDir, runRalph, tempProjects } from "../helpers/cli.js";

const project = tempProjects("ralph-list-young-");
const RUNS = 3000;

/** The young generation's size (bytes) when `ralph ARGS` exited, read by a preload (a figure, not a time). */
async function youngAtExit(args: string[], dir: string): Promise<number> {
  const preload = join(dir, "young.cjs");
  const out = join(dir, "young.txt");
  writeFileSync(
    preload,
    `process.on("exit", () => { const space = require("node:v8").getHeapSpaceStatistics().find((s) => s.space_name === "new_space"); require("node:fs").writeFileSync(${JSON.stringify(out)}, String(space.space_size)); });\n`,
  );
  const result = await runRalph(args, dir, cleanEnv({ NODE_OPTIONS: `--require ${preload}` }));
  assert.equal(result.code, 0, result.stderr);
  return Number(readFileSync(out, "utf8"));
}

test(`ralph list --json over ${RUNS} runs lets the young generation grow past its first 1 MB semi-spaces`, async () => {
  const dir = project();
  assert.equal((await runRalph(["run", "--name", "t", "-n", "1", "go", "--", "true"], dir)).code, 3);
  const status = JSON.parse(readFileSync(join(onlyRunDir(dir), "status.json"), "utf8")) as Record<string, unknown>;
  for (let i = 0; i < RUNS; i++) {
    const id = `r-${String(i).padStart(5, "0")}`;
    mkdirSync(join(dir, ".ralph", "runs", id));
    writeFileSync(join(dir, ".ralph", "runs", id, "status.json"), JSON.stringify({ ...status, run_id: id }));
  }
  const listed = await youngAtExit(["list", "--json"], dir);
  assert.ok(listed > 4 * 1024 * 1024, `young generation at ${listed} bytes after listing ${RUNS} runs`);
  // Known-false control: `ralph run` keeps it at its first size (1 MB semi-spaces, 2 MB in all).
  assert.ok(
    (await youngAtExit(
      [
        "run",
        "--name",
        "u",
        "-n",
        "1",
        "--completion-promise",
        "X",
        "go",
        "--",
        "sh",
        "-c",
        "cat >/dev/null; echo '<promise>X</promise>'",
      ],
      dir,
    )) <=
      2 * 1024 * 1024,
  );
});
