// Runs every compiled test file under dist/test with node's test runner.
// Node 20's `--test` takes no globs, so the files are listed here.
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { spawnSync } from "node:child_process";

const root = "dist/test";
const only = process.argv.slice(2);

function collect(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === "fixtures" ? [] : collect(path);
    return entry.name.endsWith(".test.js") ? [path] : [];
  });
}

const files = collect(root)
  .filter((file) => only.length === 0 || only.some((part) => file.includes(part)))
  .sort();
if (files.length === 0) {
  console.error(`no test files under ${root} match ${only.join(" ") || "*.test.js"}`);
  process.exit(1);
}
const result = spawnSync(
  process.execPath,
  ["--test", "--test-concurrency=2", "--test-timeout=180000", "--test-reporter=spec", ...files],
  { stdio: "inherit" },
);
process.exit(result.status ?? 1);
