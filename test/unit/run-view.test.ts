// The run directory a sandboxed process sees: a view of hard links made for each start, bound whole, so that
// no file ralph replaces while bubblewrap sets up is a bind source (see sandbox-run-view for the race itself).
import { after, test } from "node:test";
import assert from "node:assert/strict";
import {
  appendFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bwrapOptions, shownRunDir } from "../../src/sandbox/bwrap-argv.js";
import { makeRunView, removeLeftoverViews, removeRunView } from "../../src/sandbox/run-view.js";
import { writeFileAtomic } from "../../src/store/atomic-write.js";

const made: string[] = [];
after(() => made.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

/** A project with run x: its files, a temporary file of a write under way, its requests and a link. */
function runDir(): { project: string; run: string } {
  const project = realpathSync(mkdtempSync(join(tmpdir(), "ralph-run-view-")));
  made.push(project);
  const run = join(project, ".ralph", "runs", "x");
  mkdirSync(join(run, "requests"), { recursive: true });
  writeFileSync(join(run, "status.json"), '{"state":"running"}');
  writeFileSync(join(run, "progress.txt"), "one\n");
  writeFileSync(join(run, "settings.json"), '{"webhooks":["https://hooks.example.com/secret"]}');
  writeFileSync(join(run, "status.json.1.tmp"), "{");
  writeFileSync(join(run, "requests", "set-a.request.json"), "{}");
  symlinkSync("/etc/hostname", join(run, "planted-link"));
  return { project, run };
}

test("a view links the run's files but settings.json, temporary files, directories and links", () => {
  const { run } = runDir();
  const view = makeRunView(run);
  assert.ok(view !== null && view.startsWith(`${run}/`));
  assert.deepEqual(readdirSync(view).sort(), ["progress.txt", "status.json"]);
  assert.equal(statSync(view).mode & 0o777, 0o700);
  // The same files, not copies: a log appended to is seen growing.
  assert.equal(statSync(join(view, "progress.txt")).ino, statSync(join(run, "progress.txt")).ino);
  appendFileSync(join(run, "progress.txt"), "two\n");
  assert.equal(readFileSync(join(view, "progress.txt"), "utf8"), "one\ntwo\n");
  // status.json replaced as ralph replaces it: the view keeps the file it was made with; nothing else moves.
  writeFileAtomic(join(run, "status.json"), '{"state":"ended"}', 0o600, false);
  assert.equal(readFileSync(join(view, "status.json"), "utf8"), '{"state":"running"}');
  // A second view leaves the first out; removing a view leaves the run's files.
  const second = makeRunView(run);
  assert.ok(second !== null);
  assert.deepEqual(readdirSync(second).sort(), ["progress.txt", "status.json"]);
  assert.equal(readFileSync(join(second, "status.json"), "utf8"), '{"state":"ended"}');
  removeRunView(view);
  assert.equal(existsSync(view), false);
  assert.equal(readFileSync(join(run, "progress.txt"), "utf8"), "one\ntwo\n");
  removeLeftoverViews(run);
  assert.equal(existsSync(second), false);
  assert.deepEqual(readdirSync(run).sort(), [
    "planted-link",
    "progress.txt",
    "requests",
    "settings.json",
    "status.json",
    "status.json.1.tmp",
  ]);
});

test("a run directory that cannot hold a view gets none", () => {
  assert.equal(makeRunView(join(tmpdir(), "ralph-run-view-missing", "x")), null);
});

/** The sources of every bind in a bubblewrap command line. */
function bindSources(options: string[]): string[] {
  return options.flatMap((option, index) =>
    ["--bind", "--ro-bind", "--dev-bind"].includes(option) ? [options[index + 1] as string] : [],
  );
}

test("bubblewrap binds the view whole at the run directory's place, and nothing else of the runs", () => {
  const { project, run } = runDir();
  const view = makeRunView(run) ?? "";
  const walls = {
    workDir: project,
    projectDir: project,
    home: project,
    writeAllow: [],
    agentState: { writable: [], readOnly: [] },
    readDeny: [],
    socket: null,
    programs: [],
  };
  assert.equal(shownRunDir(project, run), run);
  // A directory that exists (one that does not has no real path to compare), its name starting as the runs' does.
  const elsewhere = join(project, ".ralph", "runs-elsewhere");
  mkdirSync(elsewhere);
  assert.equal(shownRunDir(project, elsewhere), null, "not one of the project's runs");
  const options = bwrapOptions({ ...walls, run: { dir: run, view } });
  const runs = join(project, ".ralph", "runs");
  const at = options.indexOf(view);
  assert.deepEqual(options.slice(at - 1, at + 2), ["--ro-bind", view, run]);
  assert.ok(at > options.lastIndexOf("--tmpfs") && at < options.lastIndexOf("--remount-ro"));
  assert.deepEqual(
    bindSources(options).filter((source) => source.startsWith(`${runs}/`)),
    [view],
    "no file of the live run directory is a bind source",
  );
  // Without a view, the run directory is an empty one: nothing of the runs is bound at all.
  const bare = bwrapOptions({ ...walls, run: { dir: run, view: null } });
  assert.deepEqual(
    bindSources(bare).filter((source) => source.startsWith(`${runs}/`)),
    [],
  );
  assert.deepEqual(bare.slice(bare.indexOf(run) - 1, bare.indexOf(run) + 1), ["--dir", run]);
});
