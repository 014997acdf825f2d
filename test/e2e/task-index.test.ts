// `ralph run --task-index N` through the built CLI on real repositories: the Nth task whatever the others'
// state, NO_WORK at once for a done one, usage errors that create nothing, and the task's own branch.
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { cleanEnv, readEvents, readStatus, runRalph } from "../helpers/cli.js";
import { git, isolateGitConfig, storiesRepo } from "../helpers/git-repo.js";

after(isolateGitConfig());
const REVIEWER = fileURLToPath(new URL("../fixtures/review-agent.js", import.meta.url));

const env = (extra: Record<string, string> = {}) =>
  cleanEnv({
    GIT_CONFIG_GLOBAL: process.env.GIT_CONFIG_GLOBAL ?? "",
    GIT_CONFIG_NOSYSTEM: "1",
    RALPH_DEMO_DELAY_MS: "0",
    ...extra,
  });
const run = (repo: string, args: string[], extra?: Record<string, string>) =>
  runRalph(["run", "--agent", "demo", "--tasks", "prd.json", "-n", "3", ...args, "work"], repo, env(extra));
const passes = (repo: string, ref: string) =>
  (
    JSON.parse(git(repo, "show", `${ref}:prd.json`)) as { userStories: Array<{ id: string; passes: boolean }> }
  ).userStories.map((s) => [s.id, s.passes]);

describe("ralph run --task-index", () => {
  test("index 2 works on US-3 although US-1 and US-2 are pending, on branch ralph/US-3, and ends DONE", async () => {
    const repo = storiesRepo();
    const result = await run(repo, ["--task-index", "2", "--worktree"]);
    assert.equal(result.code, 0, result.stderr + result.stdout);
    const runDir = join(repo, ".ralph", "runs", "US-3");
    assert.deepEqual(
      [readStatus(runDir).exit_reason, readStatus(runDir).iteration, readStatus(runDir).branch],
      ["DONE", 1, "ralph/US-3"],
    );
    assert.deepEqual(
      readEvents(runDir)
        .filter((e) => e.type === "iteration_started")
        .map((e) => e.task),
      ["US-3: three"],
    );
    assert.deepEqual(passes(repo, "ralph/US-3"), [
      ["US-1", false],
      ["US-2", false],
      ["US-3", true],
    ]);
  });

  test("a task already done ends NO_WORK at once: exit 0, no iteration, no agent", async () => {
    const repo = storiesRepo();
    const prd = JSON.parse(readFileSync(join(repo, "prd.json"), "utf8")) as { userStories: Array<{ passes: boolean }> };
    (prd.userStories[1] as { passes: boolean }).passes = true;
    writeFileSync(join(repo, "prd.json"), JSON.stringify(prd));
    const result = await run(repo, ["--task-index", "1"]);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /NO_WORK: task US-2: two was already done in prd\.json/);
    const runDir = join(repo, ".ralph", "runs", "US-2");
    assert.deepEqual([readStatus(runDir).exit_reason, readStatus(runDir).iteration], ["NO_WORK", 0]);
    assert.equal(
      readEvents(runDir).some((e) => e.type === "iteration_started"),
      false,
    );
    assert.equal(existsSync(join(repo, "demo-output")), false);
  });

  test("RALPH_TASK_INDEX=job takes N from JOB_COMPLETION_INDEX", async () => {
    const repo = storiesRepo();
    const result = await run(repo, [], { RALPH_TASK_INDEX: "job", JOB_COMPLETION_INDEX: "1" });
    assert.equal(result.code, 0, result.stderr);
    assert.equal(readStatus(join(repo, ".ralph", "runs", "US-2")).exit_reason, "DONE");
  });

  test("usage errors name the input, exit 2 and create nothing", async () => {
    const repo = storiesRepo();
    const cases: Array<[string[], Record<string, string>, RegExp]> = [
      [
        ["--task-index", "3"],
        {},
        /^ralph: --task-index 3: expected 0 to 2, the positions of the 3 task\(s\) in prd\.json\n$/,
      ],
      [["--task-index", "-1"], {}, /--task-index/],
      [["--task-index", "two"], {}, /^ralph: --task-index: expected a task's 0-based position .*got "two"\n$/],
      [["--task-index", "job"], {}, /^ralph: --task-index job: expected JOB_COMPLETION_INDEX to be set/],
      [["--task-index", "job"], { JOB_COMPLETION_INDEX: "x" }, /JOB_COMPLETION_INDEX to be a whole number .*got "x"/],
      [["--task-index", "0", "--task", "US-1"], {}, /--task-index and --task do not go together/],
      [["--task-index", "0", "--parallel", "2"], {}, /--parallel and --task-index do not go together/],
    ];
    for (const [args, extra, message] of cases) {
      const result = await run(repo, args, extra);
      assert.equal(result.code, 2, `${args.join(" ")}: ${result.stderr}`);
      assert.match(result.stderr, message);
      assert.doesNotMatch(result.stderr, /at .*\.js:\d+/);
      assert.equal(existsSync(join(repo, ".ralph")), false, args.join(" "));
    }
  });

  test("going on from the task's branch, the review's diff covers the earlier run's unreviewed commits, from where the branch left", async () => {
    const repo = storiesRepo();
    const state = mkdtempSync(join(tmpdir(), "ralph-review-state-"));
    const command = [process.execPath, REVIEWER, "--answers", "approve", "--state", state];
    writeFileSync(
      join(repo, "ralph.yaml"),
      `completion_criteria:\n  - type: review\n    agent: command\n    check: fixture reviewer\n    command: ${JSON.stringify(command)}\n`,
    );
    git(repo, "add", "ralph.yaml");
    git(repo, "commit", "-q", "-m", "review criterion");
    // The earlier pod's work on ralph/US-1, pushed before its task was done: never reviewed.
    const earlier = join(repo, "..", `${repo.split("/").pop()}-earlier`);
    git(repo, "worktree", "add", "-q", "-b", "ralph/US-1", earlier);
    writeFileSync(join(earlier, "smuggled.txt"), "the earlier pod's unreviewed line\n");
    git(earlier, "add", "smuggled.txt");
    git(earlier, "commit", "-q", "-m", "earlier pod");
    git(repo, "worktree", "remove", earlier);
    const result = await run(repo, ["--task-index", "0", "--worktree"]);
    assert.equal(result.code, 0, result.stderr + result.stdout);
    const asked = readFileSync(join(state, "review-1.txt"), "utf8");
    assert.match(asked, /^\+the earlier pod's unreviewed line$/m);
    rmSync(state, { recursive: true, force: true });
  });

  test("the task's branch left by an earlier run elsewhere is gone on from, not refused", async () => {
    const repo = storiesRepo();
    // What a replacement pod finds: ralph/US-1 fetched from the remote, with a commit of the earlier pod.
    git(repo, "branch", "ralph/US-1");
    git(repo, "worktree", "add", "-q", join(repo, "..", `${repo.split("/").pop()}-earlier`), "ralph/US-1");
    const earlier = join(repo, "..", `${repo.split("/").pop()}-earlier`);
    writeFileSync(join(earlier, "half.txt"), "started elsewhere\n");
    git(earlier, "add", "half.txt");
    git(earlier, "commit", "-q", "-m", "earlier pod");
    git(repo, "worktree", "remove", earlier);
    const tip = git(repo, "rev-parse", "ralph/US-1");
    const result = await run(repo, ["--task-index", "0", "--worktree"]);
    assert.equal(result.code, 0, result.stderr + result.stdout);
    assert.equal(git(repo, "rev-parse", "ralph/US-1~1"), tip);
    assert.equal(git(repo, "show", "ralph/US-1:half.txt"), "started elsewhere");
    // A run refused after its worktree was made on a reused branch removes the worktree and keeps the branch.
    git(repo, "branch", "ralph/US-2", git(repo, "rev-list", "--max-parents=0", "HEAD"));
    const before = git(repo, "rev-parse", "ralph/US-2");
    const refused = await run(repo, ["--task-index", "1", "--worktree"]);
    assert.equal(refused.code, 2, refused.stdout);
    assert.match(refused.stderr, /--tasks prd\.json: in the worktree/);
    assert.equal(git(repo, "rev-parse", "ralph/US-2"), before, "the earlier work's branch is kept");
    assert.equal(existsSync(join(repo, ".ralph", "worktrees", "US-2")), false);
    // A --name run refuses the same situation, as before: only a run named after its task reuses a branch.
    git(repo, "branch", "ralph/other");
    const named = await run(repo, ["--worktree", "--name", "other"]);
    assert.equal(named.code, 2);
    assert.match(named.stderr, /branch ralph\/other already exists/);
  });
});
