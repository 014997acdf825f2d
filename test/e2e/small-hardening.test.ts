// Smaller hardening: odd project states are usage errors, run ids, one number rule, umask, broken task lists.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { FAKE_AGENT, fakeAgent, RALPH, readStatus, runRalph, tempProjects } from "../helpers/cli.js";

const project = tempProjects("ralph-small-");

function assertOneLineUsageError(result: { code: number | null; stderr: string }, pattern: RegExp): void {
  assert.equal(result.code, 2, result.stderr);
  assert.match(result.stderr, pattern);
  assert.equal(result.stderr.trimEnd().split("\n").length, 1, result.stderr);
  assert.doesNotMatch(result.stderr, /internal error|\n\s+at /);
}

test("a dangling run link is a usage error, not an internal error", async () => {
  const dir = project();
  mkdirSync(join(dir, ".ralph", "runs"), { recursive: true });
  symlinkSync(join(dir, "nowhere"), join(dir, ".ralph", "runs", "x"));
  assertOneLineUsageError(await runRalph(["run", "--name", "x", "-n", "1", "go", ...fakeAgent()], dir), /\.ralph\/runs\/x is a symbolic link/);
  assertOneLineUsageError(await runRalph(["status", "x"], dir), /\.ralph\/runs\/x is a symbolic link/);
  assertOneLineUsageError(await runRalph(["continue", "x"], dir), /\.ralph\/runs\/x is a symbolic link/);
  const list = await runRalph(["list"], dir);
  assert.equal(list.code, 0, list.stderr);
  assert.equal(existsSync(join(dir, "nowhere")), false);
});

test("a read-only project is a usage error, not an internal error", async (t) => {
  const dir = project();
  const mounted = spawnSync("mount", ["-t", "tmpfs", "-o", "ro,size=1m", "tmpfs", dir]);
  if (mounted.status !== 0) return t.skip("cannot mount a read-only tmpfs here (needs root)");
  try {
    // Known-false control: the project really is read-only.
    assert.throws(() => writeFileSync(join(dir, "probe"), ""), /EROFS/);
    // The preflight says so before anything is tried; without it, creating the run directory does.
    assertOneLineUsageError(await runRalph(["run", "-n", "1", "go", ...fakeAgent()], dir), /^ralph: preflight: the work directory .* is not writable/);
    assertOneLineUsageError(await runRalph(["run", "-n", "1", "--preflight", "off", "go", ...fakeAgent()], dir), /^ralph: cannot create .*\.ralph\/runs \(EROFS\): the project must be writable/);
  } finally {
    execFileSync("umount", [dir]);
  }
});

test("run ids starting with '-' are refused: --name -x and --name -V", async () => {
  const dir = project();
  for (const name of ["-x", "-V", "--help"]) {
    const result = await runRalph(["run", "--name", name, "-n", "1", "--dry-run", "go"], dir);
    assertOneLineUsageError(result, new RegExp(`^ralph: --name: expected a run id .*, got "${name}"`));
    assert.equal(result.stdout, "", `--name ${name} printed nothing (no version, no help)`);
  }
  assertOneLineUsageError(await runRalph(["run", "--name=-x", "-n", "1", "--dry-run", "go"], dir), /^ralph: --name: expected a run id/);
  assert.equal(existsSync(join(dir, ".ralph")), false);
});

test("max_iterations in ralph.yaml follows the flag's rule: 1e1, 0x2 and 2.0 are refused, 2 is taken", async () => {
  const dir = project();
  for (const value of ["1e1", "0x2", "2.0"]) {
    writeFileSync(join(dir, "ralph.yaml"), `agent: command\nmax_iterations: ${value}\n`);
    assertOneLineUsageError(await runRalph(["run", "--dry-run", "go"], dir), new RegExp(`ralph\\.yaml: line 2: max_iterations: expected a whole number .*, got "${value}"`));
    assertOneLineUsageError(await runRalph(["run", "-n", value, "--dry-run", "go"], dir), /--max-iterations: expected a whole number/);
  }
  writeFileSync(join(dir, "ralph.yaml"), "max_iterations: 2\n");
  const taken = await runRalph(["run", "--name", "ok", "--dry-run", "--dry-run-delay", "0", "go", ...fakeAgent()], dir);
  assert.equal(taken.code, 0, taken.stderr);
  assert.equal(readStatus(join(dir, ".ralph", "runs", "ok")).max_iterations, 2);
});

test("ralph init and hook install create files 0644 and directories 0755 at most under umask 000", () => {
  const dir = project();
  const underUmask000 = (...args: string[]) => spawnSync("sh", ["-c", 'umask 000; exec "$@"', "sh", process.execPath, RALPH, ...args], { cwd: dir, encoding: "utf8" });
  // Known-false control: the harness really runs with umask 000.
  spawnSync("sh", ["-c", "umask 000; touch probe"], { cwd: dir });
  assert.equal(statSync(join(dir, "probe")).mode & 0o777, 0o666);
  assert.equal(underUmask000("init").status, 0);
  assert.equal(underUmask000("hook", "install").status, 0);
  const created = ["PROMPT.md", "ralph.yaml", "TASKS.md", ".gitignore", ...walk(join(dir, ".claude")).map((path) => path.slice(dir.length + 1))];
  assert.ok(created.some((path) => path.startsWith(".claude/")), created.join(" "));
  for (const path of created) {
    const mode = statSync(join(dir, path)).mode & 0o777;
    assert.equal(mode & 0o022, 0, `${path} is ${mode.toString(8)}`);
  }
});

function walk(dir: string): string[] {
  return [dir, ...readdirSync(dir, { withFileTypes: true }).flatMap((entry) => (entry.isDirectory() ? walk(join(dir, entry.name)) : [join(dir, entry.name)]))];
}

test("a task list broken mid-run is tolerated like a broken state.md: logged once, the last good version in force", async () => {
  const dir = project();
  writeFileSync(join(dir, "prd.json"), JSON.stringify({ userStories: [{ id: "US-1", title: "One", passes: false }] }));
  const breakIt = `echo '{broken' > prd.json; exec "$0" "$@"`;
  const result = await runRalph(["run", "--name", "t", "-n", "3", "--tasks", "prd.json", "go", "--", "sh", "-c", breakIt, process.execPath, FAKE_AGENT], dir);
  assert.equal(result.code, 3, result.stderr);
  const runDir = join(dir, ".ralph", "runs", "t");
  assert.equal(readStatus(runDir).iteration, 3);
  const log = readFileSync(join(runDir, "run.log"), "utf8");
  assert.equal(log.match(/ignoring task list .*prd\.json until it is fixed \(the last good version stays in force\)/g)?.length, 1, log);
});
