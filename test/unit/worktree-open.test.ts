// createWorktree / reuseWorktree with real git: the person's checkout, index and branch are never touched.
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createWorktree, reuseWorktree } from "../../src/worktree/open-worktree.js";
import { checkoutSnapshot, git, isolateGitConfig, tempRepo } from "../helpers/git-repo.js";

after(isolateGitConfig());

function expectOk<T>(outcome: ({ ok: true } & T) | { ok: false; failure: unknown }): T {
  if (!outcome.ok) assert.fail(`expected success, got ${JSON.stringify(outcome.failure)}`);
  return outcome as T;
}

describe("createWorktree", () => {
  test("on a dirty checkout: a new branch ralph/<id> at HEAD; checkout, index and branch untouched", async () => {
    const repo = tempRepo();
    writeFileSync(join(repo, "README.md"), "edited, not staged\n");
    writeFileSync(join(repo, "staged.txt"), "staged\n");
    git(repo, "add", "staged.txt");
    writeFileSync(join(repo, "untracked.txt"), "new\n");
    const before = checkoutSnapshot(repo);
    assert.match(before.status, /^ M README\.md$/m, "control: the checkout really is dirty");
    assert.match(before.status, /^A {2}staged\.txt$/m);
    const created = expectOk(await createWorktree(repo, "r1"));
    assert.deepEqual(checkoutSnapshot(repo), before);
    assert.equal(created.path, join(repo, ".ralph", "worktrees", "r1"));
    assert.equal(created.branch, "ralph/r1");
    assert.equal(created.cwd, created.path);
    assert.equal(created.base, before.head);
    assert.equal(git(created.path, "symbolic-ref", "HEAD"), "refs/heads/ralph/r1");
    assert.equal(git(created.path, "rev-parse", "HEAD"), before.head);
    assert.equal(
      readFileSync(join(created.path, "README.md"), "utf8"),
      "hello\n",
      "the worktree holds HEAD, not the person's edits",
    );
    assert.equal(
      git(created.path, "status", "--porcelain"),
      "",
      "and nothing of the person's staged or untracked files",
    );
  });

  test("on a detached HEAD: the branch starts at the detached commit and HEAD stays detached", async () => {
    const repo = tempRepo();
    const first = git(repo, "rev-parse", "HEAD");
    writeFileSync(join(repo, "second.txt"), "2\n");
    git(repo, "add", "-A");
    git(repo, "commit", "-q", "-m", "second");
    git(repo, "checkout", "-q", "--detach", first);
    const before = checkoutSnapshot(repo);
    assert.equal(before.branch, "(detached)");
    const created = expectOk(await createWorktree(repo, "det"));
    assert.deepEqual(checkoutSnapshot(repo), before);
    assert.equal(git(repo, "rev-parse", "refs/heads/ralph/det"), first);
    assert.equal(created.base, first);
  });

  test("two runs on one repository at once get two worktrees on two branches", async () => {
    const repo = tempRepo();
    const [a, b] = await Promise.all([createWorktree(repo, "run-a"), createWorktree(repo, "run-b")]);
    const [wa, wb] = [expectOk(a!), expectOk(b!)];
    writeFileSync(join(wa.path, "a.txt"), "a\n");
    assert.equal(git(wb.path, "status", "--porcelain"), "", "a change in one worktree is not seen in the other");
    assert.equal(git(wa.path, "symbolic-ref", "--short", "HEAD"), "ralph/run-a");
    assert.equal(git(wb.path, "symbolic-ref", "--short", "HEAD"), "ralph/run-b");
    assert.equal(git(repo, "symbolic-ref", "--short", "HEAD"), "main");
  });

  test("a project in a subdirectory works in the same subdirectory of the worktree", async () => {
    const repo = tempRepo();
    mkdirSync(join(repo, "pkg"));
    writeFileSync(join(repo, "pkg", "file.txt"), "x\n");
    git(repo, "add", "-A");
    git(repo, "commit", "-q", "-m", "pkg");
    const created = expectOk(await createWorktree(join(repo, "pkg"), "sub"));
    assert.equal(created.path, join(repo, "pkg", ".ralph", "worktrees", "sub"));
    assert.equal(created.cwd, join(created.path, "pkg"));
    assert.equal(readFileSync(join(created.cwd, "file.txt"), "utf8"), "x\n");
  });

  test("no repository, no commit, a taken name or branch: failures as values, nothing created", async () => {
    const plain = mkdtempSync(join(tmpdir(), "ralph-nogit-"));
    try {
      const outside = await createWorktree(plain, "x");
      assert.equal(outside.ok ? "ok" : outside.failure.kind, "not-a-repo");
    } finally {
      rmSync(plain, { recursive: true, force: true });
    }
    const empty = tempRepo({ commit: false });
    const none = await createWorktree(empty, "x");
    assert.equal(none.ok ? "ok" : none.failure.kind, "no-commit");
    assert.equal(git(empty, "branch", "--list"), "", "no branch was made");
    const repo = tempRepo();
    expectOk(await createWorktree(repo, "same"));
    const again = await createWorktree(repo, "same");
    assert.equal(again.ok ? "ok" : again.failure.kind, "path-exists");
    const dots = await createWorktree(repo, "a..b");
    assert.deepEqual(dots.ok ? "ok" : dots.failure, { kind: "bad-branch-name", branch: "ralph/a..b" });
    git(repo, "branch", "ralph/taken");
    const taken = await createWorktree(repo, "taken");
    assert.equal(taken.ok ? "ok" : taken.failure.kind, "branch-exists");
    assert.equal(
      git(repo, "worktree", "list", "--porcelain")
        .split("\n")
        .filter((line) => line.startsWith("worktree ")).length,
      2,
    );
  });

  test("GIT_DIR and GIT_INDEX_FILE from an outer git hook are not inherited", async () => {
    const outer = tempRepo();
    const repo = tempRepo();
    const before = checkoutSnapshot(outer);
    process.env.GIT_DIR = join(outer, ".git");
    process.env.GIT_INDEX_FILE = join(outer, ".git", "index");
    try {
      const created = expectOk(await createWorktree(repo, "hooked"));
      assert.equal(created.path, join(repo, ".ralph", "worktrees", "hooked"));
    } finally {
      delete process.env.GIT_DIR;
      delete process.env.GIT_INDEX_FILE;
    }
    assert.equal(git(repo, "rev-parse", "--verify", "refs/heads/ralph/hooked").length, 40);
    assert.deepEqual(checkoutSnapshot(outer), before);
    assert.throws(
      () => git(outer, "rev-parse", "--verify", "refs/heads/ralph/hooked"),
      "the outer repository got no branch",
    );
  });
});

describe("reuseWorktree", () => {
  test("finds the same worktree, branch and working directory again", async () => {
    const repo = tempRepo();
    const created = expectOk(await createWorktree(repo, "again"));
    const reused = expectOk(await reuseWorktree(repo, "again"));
    assert.deepEqual(
      { path: reused.path, branch: reused.branch, cwd: reused.cwd },
      { path: created.path, branch: created.branch, cwd: created.cwd },
    );
  });

  test("a deleted worktree, a pruned record and another branch are clear errors", async () => {
    const repo = tempRepo();
    const gone = expectOk(await createWorktree(repo, "gone"));
    rmSync(gone.path, { recursive: true, force: true });
    const deleted = await reuseWorktree(repo, "gone");
    assert.deepEqual(deleted.ok ? "ok" : deleted.failure, {
      kind: "worktree-gone",
      path: gone.path,
      branch: "ralph/gone",
      branchKept: true,
    });
    git(repo, "worktree", "prune");
    const pruned = expectOk(await createWorktree(repo, "pruned"));
    rmSync(join(repo, ".git", "worktrees", "pruned"), { recursive: true, force: true });
    const stale = await reuseWorktree(repo, "pruned");
    assert.equal(stale.ok ? "ok" : stale.failure.kind, "not-a-worktree", `${pruned.path} lost its record`);
    rmSync(join(pruned.path, ".git"));
    const plain = await reuseWorktree(repo, "pruned");
    assert.equal(
      plain.ok ? "ok" : plain.failure.kind,
      "not-a-worktree",
      "a plain directory is not taken for the worktree",
    );
    const moved = expectOk(await createWorktree(repo, "moved"));
    git(moved.path, "checkout", "-q", "-b", "elsewhere");
    const other = await reuseWorktree(repo, "moved");
    assert.deepEqual(other.ok ? "ok" : other.failure, {
      kind: "wrong-branch",
      path: moved.path,
      expected: "ralph/moved",
      actual: "elsewhere",
    });
  });
});
