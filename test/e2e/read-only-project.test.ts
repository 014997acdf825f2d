// A project ralph cannot write (a read-only mount, a directory another user owns): run, init and hook start
// give one line naming it and exit 2, with no stack trace and nothing half written.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { assertOneLineUsageError, fakeAgent, RALPH, runRalph, tempProjects } from "../helpers/cli.js";

const project = tempProjects("ralph-read-only-");

test("a read-only project is a usage error, not an internal error", async (t) => {
  const dir = project();
  const mounted = spawnSync("mount", ["-t", "tmpfs", "-o", "ro,size=1m", "tmpfs", dir]);
  if (mounted.status !== 0) return t.skip("cannot mount a read-only tmpfs here (needs root)");
  try {
    // Known-false control: the project really is read-only.
    assert.throws(() => writeFileSync(join(dir, "probe"), ""), /EROFS/);
    // The preflight says so before anything is tried; without it, creating the run directory does.
    assertOneLineUsageError(
      await runRalph(["run", "-n", "1", "go", ...fakeAgent()], dir),
      /^ralph: preflight: the work directory .* is not writable/,
    );
    assertOneLineUsageError(
      await runRalph(["run", "-n", "1", "--preflight", "off", "go", ...fakeAgent()], dir),
      /^ralph: cannot create .*\.ralph\/runs \(EROFS\): the project must be writable/,
    );
  } finally {
    execFileSync("umount", [dir]);
  }
});

test("a read-only project: ralph init and ralph hook start give one line and exit 2, no stack trace (EROFS and EACCES)", async (t) => {
  const dir = project();
  const mounted = spawnSync("mount", ["-t", "tmpfs", "-o", "ro,size=1m", "tmpfs", dir]);
  if (mounted.status !== 0) return t.skip("cannot mount a read-only tmpfs here (needs root)");
  try {
    // Known-false control: the project really is read-only.
    assert.throws(() => writeFileSync(join(dir, "probe"), ""), /EROFS/);
    assertOneLineUsageError(
      await runRalph(["init"], dir),
      /^ralph: cannot write PROMPT\.md \(EROFS: the file system is read-only\): ralph needs a writable project directory$/m,
    );
    assertOneLineUsageError(await runRalph(["hook", "start", "go"], dir), /^ralph: cannot write \.claude \(EROFS/);
  } finally {
    execFileSync("umount", [dir]);
  }
  // EACCES: a directory another user owns, with ralph run as nobody.
  const owned = project();
  mkdirSync(join(owned, "p"));
  chmodSync(owned, 0o755);
  const asNobody = (...args: string[]) =>
    spawnSync("setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", process.execPath, RALPH, ...args], {
      cwd: join(owned, "p"),
      encoding: "utf8",
    });
  const probe = spawnSync("setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", "true"]);
  if (probe.status !== 0) return t.skip("setpriv cannot switch users here");
  for (const args of [["init"], ["hook", "start", "go"]]) {
    const result = asNobody(...args);
    assertOneLineUsageError(
      { code: result.status, stderr: result.stderr },
      /^ralph: cannot write .* \(EACCES: permission denied\)/,
    );
  }
  assert.deepEqual(readdirSync(join(owned, "p")), [], "nothing half written");
  assert.equal(existsSync(join(owned, "p", ".claude")), false);
});
