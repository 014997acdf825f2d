import { after, test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { describeChange, takeFingerprint, type Fingerprint } from "../../src/judge/progress-fingerprint.js";

const base = mkdtempSync(join(tmpdir(), "ralph-fingerprint-"));
after(() => rmSync(base, { recursive: true, force: true }));

function git(cwd: string, ...args: string[]): string {
  return execFileSync("git", args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }).trim();
}

function makeRepo(name: string): string {
  const repo = join(base, name);
  mkdirSync(repo);
  git(repo, "init", "-q");
  git(repo, "config", "user.name", "Test");
  git(repo, "config", "user.email", "test@example.invalid");
  git(repo, "config", "commit.gpgsign", "false");
  return repo;
}

function write(repo: string, path: string, text: string): void {
  mkdirSync(dirname(join(repo, path)), { recursive: true });
  writeFileSync(join(repo, path), text);
}

async function take(repo: string, tasks?: string): Promise<Extract<Fingerprint, { ok: true }>> {
  const fingerprint = await takeFingerprint(repo, process.env, tasks);
  assert.ok(fingerprint.ok, fingerprint.ok ? "" : fingerprint.message);
  return fingerprint;
}

test("fingerprint: no change gives equal fingerprints; edits, commits and task edits change it; .ralph/ does not", async () => {
  const repo = makeRepo("main");
  write(repo, "src/app.ts", "export const a = 1;\n");
  write(repo, "TASKS.md", "- [ ] one\n");
  git(repo, "add", "-A");
  git(repo, "commit", "-qm", "start");

  const first = await take(repo, "TASKS.md");
  assert.match(first.head, /^[0-9a-f]{40}$/);
  assert.equal(first.head, git(repo, "rev-parse", "HEAD"));
  assert.match(first.tasks ?? "", /^[0-9a-f]{64}$/);
  const again = await take(repo, "TASKS.md");
  assert.deepEqual(again, first);
  assert.equal(describeChange(first, again), null);

  // Run files are not progress, even when .ralph/ is not in .gitignore.
  write(repo, ".ralph/runs/r1/status.json", '{"iteration":2}');
  write(repo, ".ralph/runs/r1/progress.txt", "iteration=2\n");
  write(repo, "sub/.ralph/x", "nested run dir");
  const withRunFiles = await take(repo, "TASKS.md");
  assert.equal(describeChange(again, withRunFiles), null);

  write(repo, "src/app.ts", "export const a = 2;\n");
  const edited = await take(repo, "TASKS.md");
  assert.equal(describeChange(withRunFiles, edited), "working tree changed");

  // Same status line (" M src/app.ts"), different content: still a change.
  write(repo, "src/app.ts", "export const a = 3;\n");
  const editedAgain = await take(repo, "TASKS.md");
  assert.equal(describeChange(edited, editedAgain), "working tree changed");

  write(repo, "src/new.ts", "new\n");
  const untracked = await take(repo, "TASKS.md");
  assert.equal(describeChange(editedAgain, untracked), "working tree changed");
  write(repo, "src/new.ts", "newer\n");
  const untrackedEdited = await take(repo, "TASKS.md");
  assert.equal(describeChange(untracked, untrackedEdited), "working tree changed");

  git(repo, "add", "-A", "--", ".", ":(exclude).ralph", ":(exclude)sub/.ralph");
  git(repo, "commit", "-qm", "work");
  const committed = await take(repo, "TASKS.md");
  const change = describeChange(untrackedEdited, committed) ?? "";
  assert.match(change, new RegExp(`^HEAD moved ${first.head.slice(0, 7)} → ${committed.head.slice(0, 7)}`));
  assert.notEqual(committed.head, first.head);

  // A commit of nothing but an empty change still moves HEAD: an agent that commits is not stalled.
  git(repo, "commit", "-q", "--allow-empty", "-m", "empty");
  const emptyCommit = await take(repo, "TASKS.md");
  assert.equal(emptyCommit.tree, committed.tree);
  assert.match(describeChange(committed, emptyCommit) ?? "", /^HEAD moved/);

  write(repo, "TASKS.md", "- [x] one\n");
  const tasksEdited = await take(repo, "TASKS.md");
  assert.match(describeChange(emptyCommit, tasksEdited) ?? "", /task list changed/);
  assert.equal((await take(repo)).tasks, null);
});

test("fingerprint: a gitignored task file still counts, and cwd may be a subdirectory", async () => {
  const repo = makeRepo("ignored");
  write(repo, ".gitignore", "prd.json\n.ralph/\n");
  write(repo, "pkg/index.ts", "1\n");
  write(repo, "prd.json", '{"userStories":[]}');
  git(repo, "add", "-A");
  git(repo, "commit", "-qm", "start");
  const pkg = join(repo, "pkg");
  const before = await take(pkg, "../prd.json");
  write(repo, "prd.json", '{"userStories":[{"id":"A","title":"a"}]}');
  const after = await take(pkg, "../prd.json");
  assert.equal(describeChange(before, after), "task list changed");
  write(repo, "docs/outside-cwd.md", "progress outside the subdirectory is still progress\n");
  assert.equal(describeChange(after, await take(pkg, "../prd.json")), "working tree changed");
});

test("fingerprint: a repository without commits works", async () => {
  const repo = makeRepo("fresh");
  const empty = await take(repo);
  assert.equal(empty.head, "none");
  write(repo, "a.txt", "a");
  const withFile = await take(repo);
  assert.equal(describeChange(empty, withFile), "working tree changed");
  git(repo, "add", "a.txt");
  write(repo, "a.txt", "b");
  assert.equal(describeChange(withFile, await take(repo)), "working tree changed");
});

test("fingerprint: outside a git repository it reports that git is unavailable", async () => {
  const plain = join(base, "plain");
  mkdirSync(plain);
  const saved = process.env["GIT_CEILING_DIRECTORIES"];
  process.env["GIT_CEILING_DIRECTORIES"] = base;
  try {
    const fingerprint = await takeFingerprint(plain, process.env);
    assert.equal(fingerprint.ok, false);
    assert.match(fingerprint.ok ? "" : fingerprint.message, /not in a git repository.*stall detection needs git/);
    assert.equal(describeChange(fingerprint, fingerprint), null);
    const missing = await takeFingerprint(join(base, "does-not-exist"), process.env);
    assert.match(missing.ok ? "" : missing.message, /does not exist/);
  } finally {
    if (saved === undefined) delete process.env["GIT_CEILING_DIRECTORIES"];
    else process.env["GIT_CEILING_DIRECTORIES"] = saved;
  }
});

test("fingerprint: outside any repository no git process is started; with a .git above, git is asked", async () => {
  // A git on PATH that only records that it ran (and fails, as git does outside a repository).
  const bin = join(base, "counting-bin");
  const calls = join(base, "git-calls");
  mkdirSync(bin);
  writeFileSync(
    join(bin, "git"),
    `#!/bin/sh\necho "$@" >> '${calls}'\necho 'fatal: not a git repository' >&2\nexit 128\n`,
    { mode: 0o755 },
  );
  const env: NodeJS.ProcessEnv = { ...process.env, PATH: `${bin}:${process.env["PATH"] ?? ""}` };
  delete env["GIT_DIR"];
  delete env["GIT_WORK_TREE"];
  const lines = (): number => (existsSync(calls) ? readFileSync(calls, "utf8").split("\n").filter(Boolean).length : 0);
  const plain = join(tmpdir(), `ralph-no-repo-${process.pid}`);
  mkdirSync(plain, { recursive: true });
  try {
    // Only meaningful where no directory above the temporary one is a repository.
    if (existsSync(join(dirname(plain), ".git")) || existsSync("/.git")) return;
    const outside = await takeFingerprint(plain, env);
    assert.match(outside.ok ? "" : outside.message, /not in a git repository.*stall detection needs git/);
    assert.equal(lines(), 0, "no git started outside any repository");
    // Known-false control: the same directory with a .git in it does start (the counting) git.
    mkdirSync(join(plain, ".git"));
    const inside = await takeFingerprint(plain, env);
    assert.equal(inside.ok, false);
    assert.ok(lines() > 0, "git was asked once a .git exists");
  } finally {
    rmSync(plain, { recursive: true, force: true });
  }
});
