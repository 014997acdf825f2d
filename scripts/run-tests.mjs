// Runs every compiled test file under dist/test with node's test runner.
// Node 20's `--test` takes no globs, so the files are listed here.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
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
// Besides the spec report, each batch writes its tests' durations (scripts/test-durations.mjs) to a file here.
const DURATIONS = join(dirname(fileURLToPath(import.meta.url)), "test-durations.mjs");
const timings = mkdtempSync(join(tmpdir(), "ralph-test-durations-"));
let batches = 0;
function runFiles(list, env) {
  batches += 1;
  const reporters = [
    "--test-reporter=spec",
    "--test-reporter-destination=stdout",
    `--test-reporter=${DURATIONS}`,
    `--test-reporter-destination=${join(timings, `${batches}.tsv`)}`,
  ];
  const result = spawnSync(
    process.execPath,
    ["--test", "--test-concurrency=2", "--test-timeout=180000", ...reporters, ...list],
    {
      stdio: "inherit",
      env,
    },
  );
  return result.status ?? 1;
}

/** The ten files whose tests took longest, summed over every batch (their tests' own time, not the loading of the file). */
function slowestFiles() {
  const perFile = new Map();
  for (let batch = 1; batch <= batches; batch += 1) {
    const file = join(timings, `${batch}.tsv`);
    if (!existsSync(file)) continue;
    for (const line of readFileSync(file, "utf8").split("\n").filter(Boolean)) {
      const [ms, path] = line.split("\t");
      const name = relative(root, path);
      perFile.set(name, (perFile.get(name) ?? 0) + Number(ms));
    }
  }
  const slowest = [...perFile].sort((a, b) => b[1] - a[1]).slice(0, 10);
  return slowest.map(([name, ms]) => `#   ${(ms / 1000).toFixed(1).padStart(6)} s  ${name}`).join("\n");
}

// The default supervision here is the first that works (a cgroup where one is writable); the tests of
// ending process trees run a second time with the subreaper forced, so both modes stay covered.
const SUPERVISION_FILES = ["e2e/tree-cleanup", "e2e/pid1", "e2e/signals", "e2e/exit-paths", "e2e/linger"];
// Tests read ralph's words, not its colours: picocolors colours output whenever CI or FORCE_COLOR is set,
// even into a pipe, so the tests run with NO_COLOR (which it honours first).
// The runners' records (src/control/run-ledger.ts) go to a state directory of the tests' own, not the user's.
const stateHome = mkdtempSync(join(tmpdir(), "ralph-test-state-"));
const base = { ...process.env, NO_COLOR: "1", XDG_STATE_HOME: stateHome };
delete base.FORCE_COLOR;
let status = runFiles(files, base);
const again =
  process.platform === "linux" && !process.env.RALPH_SUPERVISION
    ? files.filter((file) => SUPERVISION_FILES.some((part) => file.includes(part)))
    : [];
if (again.length > 0) {
  console.log(`\n# again with RALPH_SUPERVISION=subreaper: ${again.join(" ")}`);
  status = runFiles(again, { ...base, RALPH_SUPERVISION: "subreaper" }) || status;
}
if (files.length > 1) console.log(`\n# slowest test files:\n${slowestFiles()}`);
rmSync(stateHome, { recursive: true, force: true });
rmSync(timings, { recursive: true, force: true });
process.exit(status);
