// cleanWorktree and findOrphanWorktrees with real git: what is removed, refused, kept and reported.
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cleanWorktree } from "../../src/worktree/clean-worktree.js";
import { commitIteration } from "../../src/worktree/commit-iteration.js";
import { createWorktree } from "../../src/worktree/open-worktree.js";
import { findOrphanWorktrees } from "../../src/worktree/orphan-worktrees.js";
import { git, isolateGitConfig, tempRepo } from "../helpers/git-repo.js";

after(isolateGitConfig());

async function worktreeOf(repo: string, id: string): Promise<string> {
  const created = await createWorktree(repo, id);
  if (!created.ok) assert.fail(JSON.stringify(created.failure));
  return created.path;
}

const recorded = (repo: string) =>
  git(repo, "worktree", "list", "--porcelain")
    .split("\n")
    .filter((line) => line.startsWith("worktree ")).length;

describe("cleanWorktree", () => {
  test("removes an ended run's worktree and keeps its branch with its commits", async () => {
    const repo = tempRepo();
    const dir = await worktreeOf(repo, "done");
    writeFileSync(join(dir, "work.txt"), "w\n");
    const committed = await commitIteration({ dir, runId: "done", iteration: 1 });
    assert.ok(committed.ok && committed.commit);
    mkdirSync(join(dir, ".ralph", "runs", "nested"), { recursive: true });
    writeFileSync(
      join(dir, ".ralph", "runs", "nested", "status.json"),
      "ralph's own file is not a change of the person's\n",
    );
    const cleaned = await cleanWorktree(repo, "done", { force: false, live: false });
    assert.ok(cleaned.ok, JSON.stringify(cleaned));
    assert.deepEqual(
      {
        branch: cleaned.branch,
        head: cleaned.branchHead,
        ahead: cleaned.aheadOfHead,
        discarded: cleaned.discarded,
        gone: cleaned.directoryWasGone,
      },
      { branch: "ralph/done", head: committed.commit, ahead: 1, discarded: [], gone: false },
    );
    assert.equal(existsSync(dir), false);
    assert.equal(recorded(repo), 1, "git's record of it is gone too");
    assert.equal(git(repo, "rev-parse", "refs/heads/ralph/done"), committed.commit, "the branch is kept");
    assert.equal(git(repo, "log", "-1", "--format=%s", "ralph/done"), "ralph(done): iteration 1");
  });

  test("refuses uncommitted changes without --force, removes them with it", async () => {
    const repo = tempRepo();
    const dir = await worktreeOf(repo, "dirty");
    writeFileSync(join(dir, "README.md"), "edited\n");
    writeFileSync(join(dir, "new.txt"), "new\n");
    const refused = await cleanWorktree(repo, "dirty", { force: false, live: false });
    assert.deepEqual(refused.ok ? "ok" : refused.failure, {
      kind: "uncommitted",
      path: dir,
      changes: [" M README.md", "?? new.txt"],
    });
    assert.equal(existsSync(join(dir, "new.txt")), true, "nothing was removed");
    const forced = await cleanWorktree(repo, "dirty", { force: true, live: false });
    assert.ok(forced.ok, JSON.stringify(forced));
    assert.deepEqual(forced.discarded, [" M README.md", "?? new.txt"]);
    assert.equal(existsSync(dir), false);
    assert.equal(git(repo, "rev-parse", "--abbrev-ref", "ralph/dirty"), "ralph/dirty");
  });

  test("refuses a live run, even with --force", async () => {
    const repo = tempRepo();
    const dir = await worktreeOf(repo, "live");
    const refused = await cleanWorktree(repo, "live", { force: true, live: true });
    assert.deepEqual(refused.ok ? "ok" : refused.failure, { kind: "run-live", runId: "live" });
    assert.equal(existsSync(dir), true);
  });

  test("a worktree deleted by hand: its record is removed; no worktree at all: a failure", async () => {
    const repo = tempRepo();
    const dir = await worktreeOf(repo, "byhand");
    rmSync(dir, { recursive: true, force: true });
    const cleaned = await cleanWorktree(repo, "byhand", { force: false, live: false });
    assert.ok(cleaned.ok && cleaned.directoryWasGone && cleaned.branch === "ralph/byhand", JSON.stringify(cleaned));
    assert.equal(recorded(repo), 1);
    const none = await cleanWorktree(repo, "byhand", { force: false, live: false });
    assert.equal(none.ok ? "ok" : none.failure.kind, "no-worktree");
  });
});

describe("findOrphanWorktrees", () => {
  test("lists worktrees whose run is gone, whose directory is gone, or that git does not know; deletes nothing", async () => {
    const repo = tempRepo();
    const kept = await worktreeOf(repo, "a-live-run");
    const orphan = await worktreeOf(repo, "b-run-gone");
    const deleted = await worktreeOf(repo, "c-dir-gone");
    rmSync(deleted, { recursive: true, force: true });
    mkdirSync(join(repo, ".ralph", "worktrees", "d-plain"));
    const orphans = await findOrphanWorktrees(repo, ["a-live-run", "c-dir-gone", "d-plain"]);
    assert.deepEqual(
      orphans.map((o) => [o.id, o.problem, o.branch]),
      [
        ["b-run-gone", "run-gone", "ralph/b-run-gone"],
        ["c-dir-gone", "directory-gone", "ralph/c-dir-gone"],
        ["d-plain", "unknown-to-git", null],
      ],
    );
    assert.equal(existsSync(kept) && existsSync(orphan), true);
    assert.equal(recorded(repo), 4, "the record of the deleted one is still there");
    assert.deepEqual(
      await findOrphanWorktrees(repo, ["a-live-run", "b-run-gone", "c-dir-gone"]).then((list) => list.map((o) => o.id)),
      ["c-dir-gone", "d-plain"],
    );
  });

  test("no worktrees, or no repository: none", async () => {
    const repo = tempRepo();
    assert.deepEqual(await findOrphanWorktrees(repo, []), []);
    assert.deepEqual(await findOrphanWorktrees(join(repo, ".ralph-nowhere"), []), []);
  });
});
