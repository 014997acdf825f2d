// ralph's own git directory (the review's diff, a push) in a repository whose objects are named by SHA-256:
// it must be made for that object format, or git cannot read a single object through it.
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { treeDiff } from "../../src/worktree/tree-snapshot.js";
import { pushBranch } from "../../src/worktree/land-branch.js";
import { git, isolateGitConfig } from "../helpers/git-repo.js";

after(isolateGitConfig());
const root = mkdtempSync(join(tmpdir(), "ralph-sha256-"));
after(() => rmSync(root, { recursive: true, force: true }));

/** A sha256 repository with two commits on branch `ralph/w`; their trees. */
function sha256Repo(): { repo: string; before: string; after: string } {
  const repo = join(root, `repo-${Math.random().toString(36).slice(2)}`);
  git(root, "init", "-q", "--object-format=sha256", "-b", "main", repo);
  git(repo, "config", "user.name", "Ada Tester");
  git(repo, "config", "user.email", "ada@example.test");
  writeFileSync(join(repo, "README.md"), "hello\n");
  git(repo, "add", "-A");
  git(repo, "commit", "-q", "-m", "first");
  git(repo, "switch", "-q", "-c", "ralph/w");
  writeFileSync(join(repo, "work.txt"), "the work\n");
  git(repo, "add", "-A");
  git(repo, "commit", "-q", "-m", "work");
  return { repo, before: git(repo, "rev-parse", "main^{tree}"), after: git(repo, "rev-parse", "ralph/w^{tree}") };
}

test("the review's diff of a sha256 repository shows the change", async () => {
  const { repo, before, after } = sha256Repo();
  assert.equal(before.length, 64);
  const diff = await treeDiff(repo, process.env, before, after, 1 << 20);
  assert.ok(diff.ok, diff.ok ? "" : diff.message);
  assert.match(diff.text, /\+the work/);
});

test("a run's branch of a sha256 repository is pushed to a sha256 remote", async () => {
  const { repo } = sha256Repo();
  const remote = join(root, `remote-${Math.random().toString(36).slice(2)}.git`);
  git(root, "init", "-q", "--bare", "--object-format=sha256", remote);
  const pushed = await pushBranch(repo, remote, "ralph/w", "ralph/w");
  assert.ok(pushed.ok, pushed.ok ? "" : pushed.message);
  assert.equal(git(remote, "rev-parse", "refs/heads/ralph/w"), git(repo, "rev-parse", "ralph/w"));
});
