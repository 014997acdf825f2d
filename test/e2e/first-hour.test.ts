// A newcomer's first hour: the small messages and edges met before a first real run.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cleanEnv, fakeAgent, RALPH, resultOf, runRalph, startRalph, tempProjects, waitForFile } from "../helpers/cli.js";

const project = tempProjects("ralph-first-hour-");

function assertOneLineUsageError(result: { code: number | null; stderr: string }, pattern: RegExp): void {
  assert.equal(result.code, 2, result.stderr);
  assert.match(result.stderr, pattern);
  assert.equal(result.stderr.trimEnd().split("\n").length, 1, result.stderr);
  assert.doesNotMatch(result.stderr, /internal error|\n\s+at /);
}

test("a reader closing the pipe early (ralph run --help | head -1) never crashes ralph, six times out of six", async () => {
  const dir = project();
  for (let i = 0; i < 6; i++) {
    const child = spawn(process.execPath, [RALPH, "run", "--help"], { cwd: dir, env: cleanEnv(), stdio: ["ignore", "pipe", "pipe"] });
    let first = "";
    // The reader takes the first chunk and closes its end, as head -1 does.
    child.stdout.once("data", (chunk: Buffer) => {
      first = chunk.toString("utf8");
      child.stdout.destroy();
    });
    const ended = await resultOf(child);
    assert.match(first, /^Usage: ralph run/);
    assert.equal(ended.code, 0, ended.stderr);
    assert.doesNotMatch(ended.stderr, /EPIPE|\n\s+at /);
  }
});

test("--worktree outside a git repository says so first, not that git lacks an identity", async () => {
  const dir = project();
  const noIdentity = cleanEnv({ GIT_CONFIG_GLOBAL: "/dev/null", GIT_CONFIG_NOSYSTEM: "1", HOME: dir });
  assertOneLineUsageError(await runRalph(["run", "-n", "1", "--worktree", "go", ...fakeAgent()], dir, noIdentity), /^ralph: --worktree: .* is not in a git repository/);
});

test("--agent cluade gets a did-you-mean; a word far from every agent gets none", async () => {
  const dir = project();
  assertOneLineUsageError(await runRalph(["run", "--agent", "cluade", "go"], dir), /got "cluade" \(did you mean claude\?\)\n?$/);
  const far = await runRalph(["run", "--agent", "xyz", "go"], dir);
  assertOneLineUsageError(far, /--agent: expected one of claude/);
  assert.doesNotMatch(far.stderr, /did you mean/);
});

test("a bad value in ralph.yaml is refused even when a flag overrides it", async () => {
  const dir = project();
  writeFileSync(join(dir, "ralph.yaml"), "max_iterations: ten\n");
  assertOneLineUsageError(await runRalph(["run", "-n", "1", "--dry-run", "go"], dir), /ralph\.yaml: line 1: max_iterations: expected a whole number .*got "ten"/);
});

test("status, logs and set with no runs at all say there are none yet", async () => {
  const dir = project();
  for (const args of [["status"], ["logs"], ["set", "max_iterations=4"]]) {
    assertOneLineUsageError(await runRalph(args, dir), /^ralph: no runs yet in \.ralph\/runs: .*ralph run/);
  }
});

test("ralph set max_iterations=4 with one active run needs no RUN", async () => {
  const dir = project();
  const gate = join(dir, "gate");
  const started = startRalph(["run", "-n", "1", "--name", "only", "go", ...fakeAgent("--wait-for", gate)], dir);
  try {
    await waitForFile(`${gate}.started`);
    const set = await runRalph(["set", "max_iterations=2"], dir);
    assert.equal(set.code, 0, set.stderr);
    assertOneLineUsageError(await runRalph(["set"], dir), /nothing to set/);
    writeFileSync(gate, "go");
    const result = await started.done;
    assert.equal(result.code, 3, result.stderr);
    assert.match(result.stdout + result.stderr, /2\/2|iteration 2/);
  } finally {
    started.child.kill("SIGKILL");
  }
});

test("a read-only project: ralph init and ralph hook start give one line and exit 2, no stack trace (EROFS and EACCES)", async (t) => {
  const dir = project();
  const mounted = spawnSync("mount", ["-t", "tmpfs", "-o", "ro,size=1m", "tmpfs", dir]);
  if (mounted.status !== 0) return t.skip("cannot mount a read-only tmpfs here (needs root)");
  try {
    // Known-false control: the project really is read-only.
    assert.throws(() => writeFileSync(join(dir, "probe"), ""), /EROFS/);
    assertOneLineUsageError(await runRalph(["init"], dir), /^ralph: cannot write PROMPT\.md \(EROFS: the file system is read-only\): ralph needs a writable project directory$/m);
    assertOneLineUsageError(await runRalph(["hook", "start", "go"], dir), /^ralph: cannot write \.claude \(EROFS/);
  } finally {
    execFileSync("umount", [dir]);
  }
  // EACCES: a directory another user owns, with ralph run as nobody.
  const owned = project();
  mkdirSync(join(owned, "p"));
  chmodSync(owned, 0o755);
  const asNobody = (...args: string[]) => spawnSync("setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", process.execPath, RALPH, ...args], { cwd: join(owned, "p"), encoding: "utf8" });
  const probe = spawnSync("setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", "true"]);
  if (probe.status !== 0) return t.skip("setpriv cannot switch users here");
  for (const args of [["init"], ["hook", "start", "go"]]) {
    const result = asNobody(...args);
    assertOneLineUsageError({ code: result.status, stderr: result.stderr }, /^ralph: cannot write .* \(EACCES: permission denied\)/);
  }
  assert.deepEqual(readdirSync(join(owned, "p")), [], "nothing half written");
  assert.equal(existsSync(join(owned, "p", ".claude")), false);
});
