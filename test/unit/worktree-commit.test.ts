// commitIteration with real git: what is committed, as whom, and what never is.
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { commitIteration, commitMessage } from "../../src/worktree/commit-iteration.js";
import { createWorktree } from "../../src/worktree/open-worktree.js";
import { git, isolateGitConfig, tempRepo } from "../helpers/git-repo.js";

after(isolateGitConfig());

async function worktreeOf(repo: string, id: string): Promise<string> {
  const created = await createWorktree(repo, id);
  if (!created.ok) assert.fail(JSON.stringify(created.failure));
  return created.path;
}

const files = (dir: string, rev = "HEAD") =>
  git(dir, "show", "--name-only", "--format=", rev)
    .split("\n")
    .filter((line) => line !== "")
    .sort();

describe("commitIteration", () => {
  test("commits every change but .ralph as `ralph(<id>): iteration N: task`, by the configured author", async () => {
    // No .gitignore entry for .ralph/: ralph's files are kept out by the commit itself.
    const repo = tempRepo({ ignoreRalph: false });
    const dir = await worktreeOf(repo, "c1");
    const base = git(dir, "rev-parse", "HEAD");
    writeFileSync(join(dir, "README.md"), "changed\n");
    mkdirSync(join(dir, "src", ".ralph"), { recursive: true });
    writeFileSync(join(dir, "src", "new.ts"), "export {};\n");
    writeFileSync(join(dir, "src", ".ralph", "deep.txt"), "ralph\n");
    mkdirSync(join(dir, ".ralph", "runs", "c1"), { recursive: true });
    writeFileSync(join(dir, ".ralph", "runs", "c1", "state.md"), "run file\n");
    writeFileSync(join(dir, ".ralph", "staged-by-agent"), "x\n");
    git(dir, "add", "-f", ".ralph/staged-by-agent");
    const result = await commitIteration({ dir, runId: "c1", iteration: 2, task: "Add the parser\nwith details" });
    assert.ok(result.ok, JSON.stringify(result));
    assert.equal(result.files, 2);
    assert.equal(result.commit, git(dir, "rev-parse", "HEAD"));
    assert.equal(git(dir, "rev-parse", "HEAD~1"), base, "one commit on top of the base");
    assert.equal(git(dir, "log", "-1", "--format=%s"), "ralph(c1): iteration 2: Add the parser");
    assert.equal(
      git(dir, "log", "-1", "--format=%an <%ae>|%cn <%ce>"),
      "Ada Tester <ada@example.test>|Ada Tester <ada@example.test>",
    );
    assert.deepEqual(files(dir), ["README.md", "src/new.ts"]);
    assert.equal(git(dir, "ls-files", "--", ".ralph", "src/.ralph"), "", ".ralph files are not even left staged");
    assert.equal(git(repo, "symbolic-ref", "--short", "HEAD"), "main");
    assert.equal(git(repo, "rev-parse", "main"), base, "the person's branch did not move");
  });

  test("the message without a task, and a long task shortened", () => {
    assert.equal(commitMessage("r", 1), "ralph(r): iteration 1");
    assert.equal(commitMessage("r", 1, "  "), "ralph(r): iteration 1");
    const long = commitMessage("r", 7, "x".repeat(300));
    assert.equal(long, `ralph(r): iteration 7: ${"x".repeat(99)}…`);
  });

  test("an agent that committed itself keeps its commits; only what it left is committed", async () => {
    const repo = tempRepo();
    const dir = await worktreeOf(repo, "self");
    writeFileSync(join(dir, "a.txt"), "a\n");
    git(dir, "add", "a.txt");
    git(dir, "-c", "user.name=Agent", "-c", "user.email=agent@example.test", "commit", "-q", "-m", "agent: add a");
    const agentCommit = git(dir, "rev-parse", "HEAD");
    writeFileSync(join(dir, "b.txt"), "b\n");
    const result = await commitIteration({ dir, runId: "self", iteration: 1 });
    assert.ok(result.ok && result.commit !== null, JSON.stringify(result));
    assert.equal(git(dir, "rev-parse", "HEAD~1"), agentCommit, "the agent's commit is the parent, unchanged");
    assert.equal(git(dir, "log", "-1", "--format=%an %s", agentCommit), "Agent agent: add a");
    assert.deepEqual(files(dir), ["b.txt"]);
  });

  test("nothing changed, or the agent committed everything: no commit", async () => {
    const repo = tempRepo();
    const dir = await worktreeOf(repo, "none");
    const head = git(dir, "rev-parse", "HEAD");
    assert.deepEqual(await commitIteration({ dir, runId: "none", iteration: 1 }), { ok: true, commit: null, files: 0 });
    mkdirSync(join(dir, ".ralph"));
    writeFileSync(join(dir, ".ralph", "only-ralph"), "x\n");
    assert.deepEqual(
      await commitIteration({ dir, runId: "none", iteration: 2 }),
      { ok: true, commit: null, files: 0 },
      "ralph's files alone are nothing to commit",
    );
    writeFileSync(join(dir, "c.txt"), "c\n");
    git(dir, "add", "c.txt");
    git(dir, "commit", "-q", "-m", "agent did it");
    const agent = git(dir, "rev-parse", "HEAD");
    assert.deepEqual(await commitIteration({ dir, runId: "none", iteration: 3 }), { ok: true, commit: null, files: 0 });
    assert.equal(git(dir, "rev-parse", "HEAD"), agent);
    assert.notEqual(agent, head);
  });

  test("no author in git config: a failure naming what to set, and no commit", async () => {
    const repo = tempRepo({ author: false });
    const dir = await worktreeOf(repo, "anon");
    const head = git(dir, "rev-parse", "HEAD");
    writeFileSync(join(dir, "d.txt"), "d\n");
    const result = await commitIteration({ dir, runId: "anon", iteration: 1 });
    assert.deepEqual(result.ok ? "ok" : result.failure, { kind: "no-author", missing: ["user.name", "user.email"] });
    assert.equal(git(dir, "rev-parse", "HEAD"), head);
    git(repo, "config", "user.name", "Late Author");
    const half = await commitIteration({ dir, runId: "anon", iteration: 1 });
    assert.deepEqual(half.ok ? "ok" : half.failure, { kind: "no-author", missing: ["user.email"] });
    git(repo, "config", "user.email", "late@example.test");
    const done = await commitIteration({ dir, runId: "anon", iteration: 1 });
    assert.ok(done.ok && done.commit !== null, JSON.stringify(done));
    assert.equal(git(dir, "log", "-1", "--format=%an"), "Late Author");
  });

  test("a worktree moved to another branch or mid-merge is not committed in", async () => {
    const repo = tempRepo();
    const dir = await worktreeOf(repo, "moved");
    git(dir, "checkout", "-q", "-b", "other");
    const other = git(dir, "rev-parse", "HEAD");
    writeFileSync(join(dir, "e.txt"), "e\n");
    const moved = await commitIteration({ dir, runId: "moved", iteration: 1 });
    assert.deepEqual(moved.ok ? "ok" : moved.failure, {
      kind: "wrong-branch",
      path: dir,
      expected: "ralph/moved",
      actual: "other",
    });
    assert.equal(git(dir, "rev-parse", "HEAD"), other);
    git(dir, "checkout", "-q", "ralph/moved");
    git(dir, "update-ref", "MERGE_HEAD", other);
    const merging = await commitIteration({ dir, runId: "moved", iteration: 1 });
    assert.equal(merging.ok ? "ok" : merging.failure.kind, "operation-in-progress");
  });
});
