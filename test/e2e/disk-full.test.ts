// A full disk: ralph's own logs fill a small tmpfs holding the project while a chatty agent runs.
// The run must end FAILED "disk full" with its marker, status and lock in order, no stack trace,
// and an events.jsonl whose every line is whole (a later append starts on a fresh line).
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, rmdirSync, statfsSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { cleanEnv, completionMarker, readStatus, runRalph } from "../helpers/cli.js";

const SIZE = 2 * 1024 * 1024;

/** Mounts a tmpfs of SIZE bytes; null with the reason when this machine does not allow it. */
function mountSmallDisk(): { dir: string; unmount: () => void } | string {
  const dir = mkdtempSync(join(tmpdir(), "ralph-disk-"));
  try {
    execFileSync("mount", ["-t", "tmpfs", "-o", `size=${SIZE},mode=0700`, "tmpfs", dir], { stdio: "pipe" });
  } catch (error) {
    rmdirSync(dir);
    return `cannot mount a tmpfs here (${String((error as { stderr?: Buffer }).stderr ?? error).trim()}); run as root`;
  }
  return {
    dir,
    unmount: () => {
      execFileSync("umount", ["-l", dir]);
      rmdirSync(dir);
    },
  };
}

function eventLines(runDir: string): string[] {
  const text = readFileSync(join(runDir, "events.jsonl"), "utf8");
  assert.ok(text.endsWith("\n"), "events.jsonl ends with a whole line");
  return text.slice(0, -1).split("\n");
}

const disk = mountSmallDisk();
const skip = typeof disk === "string" ? disk : false;

describe("a full disk", { skip }, () => {
  const dir = typeof disk === "string" ? "" : disk.dir;
  before(() => writeFileSync(join(dir, "PROMPT.md"), "go\n"));
  after(() => typeof disk !== "string" && disk.unmount());

  test("the harness really fills the disk (known-false control)", () => {
    assert.ok(statfsSync(dir).blocks * statfsSync(dir).bsize <= SIZE);
    const filler = join(dir, "filler");
    assert.throws(() => writeFileSync(filler, Buffer.alloc(SIZE + 4096)), { code: "ENOSPC" });
    rmSync(filler);
  });

  test("ends the run FAILED 'disk full' with its marker and status, lock released, no stack trace", async () => {
    const args = ["run", "--name", "full", "-n", "3", "--", "sh", "-c", "yes ralph-fills-the-disk-with-this-line"];
    const result = await runRalph(args, dir, cleanEnv(), 60_000);
    const runDir = join(dir, ".ralph", "runs", "full");
    assert.equal(result.code, 1, result.stderr);
    assert.match(result.stdout, /FAILED: disk full/);
    assert.doesNotMatch(result.stderr, /internal error|ENOSPC|\n\s+at /, "no stack trace");
    assert.deepEqual(completionMarker(runDir), ["completion_reason=FAILED", "promise=COMPLETE"]);
    const status = readStatus(runDir);
    assert.deepEqual([status.state, status.exit_reason, status.last_action], ["ended", "FAILED", "disk full"]);
    assert.ok(!existsSync(join(runDir, "lock")), "the run lock is released");
    assert.ok(!existsSync(join(runDir, "disk-reserve")), "the reserve is given back");
    const lines = eventLines(runDir);
    for (const line of lines) JSON.parse(line);
    assert.equal((JSON.parse(lines.at(-1) as string) as { type: string }).type, "run_ended");

    // Room again (the iteration's log removed): a continued run appends whole lines after the old ones.
    rmSync(join(runDir, "iter-001.log"));
    const again = await runRalph(["continue", "full"], dir, cleanEnv(), 60_000);
    assert.equal(again.code, 1, again.stderr);
    assert.match(again.stdout, /FAILED: disk full/);
    const more = eventLines(runDir);
    assert.ok(more.length > lines.length);
    for (const line of more) JSON.parse(line);
    assert.deepEqual(completionMarker(runDir), ["completion_reason=FAILED", "promise=COMPLETE"]);
  });

  test("a disk already full: one line, no stack trace, no lock left behind", async () => {
    const filler = join(dir, "filler");
    try {
      writeFileSync(filler, Buffer.alloc(SIZE));
    } catch {
      // filled up to the last byte
    }
    try {
      const result = await runRalph(["run", "--name", "early", "-n", "1", "--", "true"], dir, cleanEnv(), 30_000);
      assert.equal(result.code, 1, result.stderr);
      assert.match(result.stderr, /^ralph: disk full: /);
      assert.equal(result.stderr.trim().split("\n").length, 1, result.stderr);
      assert.ok(!existsSync(join(dir, ".ralph", "runs", "early", "lock")), "no empty lock left");
    } finally {
      rmSync(filler, { force: true });
    }
  });
});
