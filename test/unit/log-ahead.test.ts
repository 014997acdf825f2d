// The next iteration's log made ahead: ready for the iteration's own open, never through a link or over a
// file already there (those are left to the iteration's open, which refuses or appends as before), and an
// empty one made for an iteration that never runs removed with the run.
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import {
  existsSync,
  lstatSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
  writeSync,
  closeSync,
  openSync,
  constants,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LogAhead } from "../../src/store/log-ahead.js";

const dirs: string[] = [];
after(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function scratch(): string {
  const dir = mkdtempSync(join(tmpdir(), "ralph-log-ahead-"));
  dirs.push(dir);
  return dir;
}

describe("LogAhead", () => {
  test("a log made ahead is taken ready for appending, a private file of its own", async () => {
    const dir = scratch();
    const file = join(dir, "iter-002.log");
    const ahead = new LogAhead();
    await ahead.prepare(file);
    const fd = ahead.take(file);
    assert.notEqual(fd, null);
    writeSync(fd as number, "out\n");
    closeSync(fd as number);
    assert.equal(readFileSync(file, "utf8"), "out\n");
    assert.equal(lstatSync(file).mode & 0o777, 0o600);
    assert.equal(ahead.take(file), null, "taken once");
  });

  test("a link or file planted where the log goes is neither followed nor written: the iteration's own open meets it", async () => {
    const dir = scratch();
    const target = join(dir, "elsewhere");
    writeFileSync(target, "theirs\n");
    const link = join(dir, "iter-002.log");
    symlinkSync(target, link);
    const planted = join(dir, "iter-003.log");
    writeFileSync(planted, "forged output\n");
    const ahead = new LogAhead();
    await ahead.prepare(link);
    assert.equal(ahead.take(link), null);
    await ahead.prepare(planted);
    assert.equal(ahead.take(planted), null);
    assert.ok(lstatSync(link).isSymbolicLink());
    assert.equal(readFileSync(target, "utf8"), "theirs\n");
    assert.equal(readFileSync(planted, "utf8"), "forged output\n");
    // Known-false control: the same open without O_EXCL and O_NOFOLLOW writes through the link.
    const naive = openSync(link, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT, 0o600);
    writeSync(naive, "through the link\n");
    closeSync(naive);
    assert.equal(readFileSync(target, "utf8"), "theirs\nthrough the link\n");
  });

  test("one made for an iteration that does not run is removed (with the run, or when another takes its place); one taken too early is kept for the iteration's own open", async () => {
    const dir = scratch();
    const unused = join(dir, "iter-004.log");
    const ahead = new LogAhead();
    await ahead.prepare(unused);
    assert.ok(existsSync(unused));
    ahead.dispose();
    assert.equal(existsSync(unused), false);

    const early = join(dir, "iter-005.log");
    const made = ahead.prepare(early);
    assert.equal(ahead.take(early), null, "not ready yet: the iteration opens it itself");
    await made;
    assert.ok(existsSync(early), "kept: the iteration's open appends to it");
    ahead.dispose();
    assert.ok(existsSync(early));

    // The run ends while a log is being made: dispose settles once that open is over and its file gone.
    const inflight = join(dir, "iter-008.log");
    let opened = false;
    void ahead.prepare(inflight).then(() => (opened = true));
    await ahead.dispose();
    assert.ok(opened, "dispose waited for the open");
    assert.equal(existsSync(inflight), false);

    // A file put in its place (empty too) is someone else's: it is left where it is.
    const swapped = join(dir, "iter-009.log");
    await ahead.prepare(swapped);
    rmSync(swapped);
    writeFileSync(swapped, "");
    await ahead.dispose();
    assert.ok(existsSync(swapped), "the file now at the path is not the one made ahead");

    // An iteration that runs again takes its own log: the one made for the next is removed while empty.
    const next = join(dir, "iter-007.log");
    await ahead.prepare(next);
    assert.equal(ahead.take(join(dir, "iter-006.log")), null);
    assert.equal(existsSync(next), false);
  });
});
