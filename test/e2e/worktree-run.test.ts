// `ralph run --worktree` and `--commit iteration` on real repositories, through the built CLI.
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  assertOneLineUsageError,
  cleanEnv,
  FAKE_AGENT,
  fakeAgent,
  runRalph,
  startRalph,
  tempProject,
  tempProjects,
} from "../helpers/cli.js";
import { waitFor, waitForFile } from "../helpers/wait.js";
import { checkoutSnapshot, git, isolateGitConfig, STORIES, storiesRepo, tempRepo } from "../helpers/git-repo.js";

after(isolateGitConfig());

const env = () => cleanEnv({ GIT_CONFIG_GLOBAL: process.env.GIT_CONFIG_GLOBAL ?? "", GIT_CONFIG_NOSYSTEM: "1" });
const agent = (...args: string[]) => ["--", process.execPath, FAKE_AGENT, ...args];
const project = tempProjects("ralph-worktree-run-");

function events(repo: string, id: string): Array<Record<string, unknown>> {
  return readFileSync(join(repo, ".ralph", "runs", id, "events.jsonl"), "utf8")
    .trimEnd()
    .split("\n")
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

function subjects(repo: string, ref: string): string[] {
  return git(repo, "log", "--format=%s", `main..${ref}`)
    .split("\n")
    .filter((line) => line !== "");
}

describe("ralph run --worktree", () => {
  test("two runs on one repository at once: each on its own branch, every iteration committed, the checkout untouched", async () => {
    const repo = storiesRepo();
    const before = checkoutSnapshot(repo);
    const runs = ["a", "b"].map((id) =>
      startRalph(
        ["run", "--agent", "demo", "--tasks", "prd.json", "--worktree", "--name", id, "-n", "5", "work"],
        repo,
        env(),
      ),
    );
    const results = await Promise.all(runs.map((run) => run.done));
    for (const result of results) assert.equal(result.code, 0, result.stderr + result.stdout);
    for (const id of ["a", "b"]) {
      assert.deepEqual(
        subjects(repo, `ralph/${id}`),
        [3, 2, 1].map((n) => `ralph(${id}): iteration ${n}: US-${n}: ${STORIES[n - 1]?.title}`),
      );
      // The demo agent marked its stories done in the worktree's own prd.json, committed on the branch.
      assert.equal(
        (
          JSON.parse(git(repo, "show", `ralph/${id}:prd.json`)) as { userStories: Array<{ passes: boolean }> }
        ).userStories.every((s) => s.passes),
        true,
      );
      assert.equal(git(repo, "ls-tree", "-r", "--name-only", `ralph/${id}`).includes(".ralph"), false);
      const status = JSON.parse(readFileSync(join(repo, ".ralph", "runs", id, "status.json"), "utf8")) as Record<
        string,
        unknown
      >;
      assert.equal(status.branch, `ralph/${id}`);
      assert.equal(status.worktree, join(repo, ".ralph", "worktrees", id));
      const started = events(repo, id).find((event) => event.type === "run_started");
      assert.equal(started?.branch, `ralph/${id}`);
      assert.equal(started?.cwd, join(repo, ".ralph", "worktrees", id));
      const ended = events(repo, id).filter((event) => event.type === "iteration_ended");
      assert.deepEqual(
        ended.map((event) => event.commit),
        ended.map((_, n) => git(repo, "rev-parse", `ralph/${id}~${2 - n}`)),
      );
    }
    assert.deepEqual(checkoutSnapshot(repo), before);
    const list = JSON.parse((await runRalph(["list", "--json"], repo, env())).stdout) as {
      runs: Array<{ id: string; branch: string | null }>;
    };
    assert.deepEqual(list.runs.map((run) => [run.id, run.branch]).sort(), [
      ["a", "ralph/a"],
      ["b", "ralph/b"],
    ]);
    const text = await runRalph(["status", "a"], repo, env());
    assert.match(text.stdout, /^branch {5}ralph\/a \(worktree .*\.ralph\/worktrees\/a\)$/m);
  });

  test("a dirty checkout stays as it is, and its uncommitted work is not in the worktree", async () => {
    const repo = storiesRepo();
    writeFileSync(join(repo, "README.md"), "changed, not committed\n");
    writeFileSync(join(repo, "scratch.txt"), "untracked\n");
    git(repo, "add", "scratch.txt");
    const before = checkoutSnapshot(repo);
    const result = await runRalph(
      ["run", "--worktree", "--name", "d", "-n", "1", "work", ...agent("--write-at", "1", "made.txt")],
      repo,
      env(),
    );
    assert.equal(result.code, 3, result.stderr);
    assert.deepEqual(checkoutSnapshot(repo), before);
    assert.equal(readFileSync(join(repo, "README.md"), "utf8"), "changed, not committed\n");
    assert.equal(git(repo, "show", "ralph/d:README.md"), "hello");
    assert.deepEqual(git(repo, "ls-tree", "--name-only", "ralph/d").split("\n").sort(), [
      ".gitignore",
      "README.md",
      "made.txt",
      "prd.json",
    ]);
  });

  test("a detached HEAD: the branch starts at that commit and the checkout stays detached", async () => {
    const repo = storiesRepo();
    const first = git(repo, "rev-parse", "HEAD~1");
    git(repo, "checkout", "-q", "--detach", first);
    const before = checkoutSnapshot(repo);
    assert.equal(before.branch, "(detached)");
    const result = await runRalph(
      ["run", "--worktree", "--name", "h", "-n", "1", "work", ...agent("--write-at", "1", "made.txt")],
      repo,
      env(),
    );
    assert.equal(result.code, 3, result.stderr);
    assert.deepEqual(checkoutSnapshot(repo), before);
    assert.equal(git(repo, "rev-parse", "ralph/h~1"), first);
  });

  test("an agent that commits itself: its commit stays, ralph adds none when nothing is left", async () => {
    const repo = storiesRepo();
    const result = await runRalph(
      ["run", "--worktree", "--name", "s", "-n", "2", "work", ...agent("--git-commit")],
      repo,
      env(),
    );
    assert.equal(result.code, 3, result.stderr);
    assert.deepEqual(subjects(repo, "ralph/s"), ["iteration 2", "iteration 1"]);
    const ended = events(repo, "s").filter((event) => event.type === "iteration_ended");
    assert.deepEqual(
      ended.map((event) => [event.commit, event.commit_error]),
      [
        [null, undefined],
        [null, undefined],
      ],
    );
    assert.match(result.stdout, /iteration 1: no changes left to commit/);
    assert.equal(git(repo, "status", "--porcelain"), "");
  });

  test("--commit off leaves the changes uncommitted in the worktree; files under .ralph are never committed", async () => {
    const repo = storiesRepo();
    const off = await runRalph(
      [
        "run",
        "--worktree",
        "--commit",
        "off",
        "--name",
        "o",
        "-n",
        "1",
        "work",
        ...agent("--write-at", "1", "made.txt"),
      ],
      repo,
      env(),
    );
    assert.equal(off.code, 3, off.stderr);
    assert.deepEqual(subjects(repo, "ralph/o"), []);
    assert.equal(git(join(repo, ".ralph", "worktrees", "o"), "status", "--porcelain"), "?? made.txt");
    const dot = await runRalph(
      [
        "run",
        "--worktree",
        "--name",
        "r",
        "-n",
        "1",
        "work",
        ...agent("--write-at", "1", "made.txt", "--write-at", "1", ".ralph/inside.txt"),
      ],
      repo,
      env(),
    );
    assert.equal(dot.code, 3, dot.stderr);
    assert.deepEqual(git(repo, "ls-tree", "-r", "--name-only", "ralph/r").split("\n").sort(), [
      ".gitignore",
      "README.md",
      "made.txt",
      "prd.json",
    ]);
  });

  test("continue after the runner was SIGKILLed reuses the worktree and commits what the killed iteration left", async () => {
    const repo = storiesRepo();
    const go = join(repo, "..", `${repo.split("/").pop()}-go`);
    const run = startRalph(
      ["run", "--worktree", "--name", "c", "-n", "1", "work", ...agent("--touch", "touched.txt", "--wait-for", go)],
      repo,
      env(),
    );
    await waitForFile(`${go}.started`, 20_000);
    run.child.kill("SIGKILL");
    assert.equal((await run.done).signal, "SIGKILL");
    const worktree = join(repo, ".ralph", "worktrees", "c");
    assert.equal(readFileSync(join(worktree, "touched.txt"), "utf8"), "1\n");
    const continued = await runRalph(["continue", "c", "-n", "2"], repo, env());
    assert.equal(continued.code, 3, continued.stderr);
    assert.deepEqual(subjects(repo, "ralph/c"), ["ralph(c): iteration 2"]);
    assert.equal(git(repo, "show", "ralph/c:touched.txt"), "1\n2");
    const worktrees = git(repo, "worktree", "list", "--porcelain")
      .split("\n")
      .filter((line) => line.startsWith("worktree "));
    assert.equal(worktrees.length, 2);
    assert.equal(
      events(repo, "c")
        .filter((event) => event.type === "run_started")
        .every((event) => event.cwd === worktree),
      true,
    );
    const status = JSON.parse(readFileSync(join(repo, ".ralph", "runs", "c", "status.json"), "utf8")) as Record<
      string,
      unknown
    >;
    assert.deepEqual([status.branch, status.worktree], ["ralph/c", worktree]);
  });
});

describe("ralph run --worktree: usage errors leave nothing behind", () => {
  test("no commit author: exit 2 naming what is missing, no run, worktree or branch; --commit off runs", async () => {
    const repo = tempRepo({ author: false });
    const result = await runRalph(["run", "--worktree", "--name", "x", "work", ...agent()], repo, env());
    assert.equal(result.code, 2);
    assert.equal(
      result.stderr,
      "ralph: --commit iteration: git does not know who commits: set user.name and user.email (git config --global user.name ...), or use --commit off\n",
    );
    assert.equal(existsSync(join(repo, ".ralph")), false);
    assert.equal(git(repo, "branch", "--list", "ralph/*"), "");
    // Known-false control: the same repository runs once nothing needs an author.
    const off = await runRalph(
      ["run", "--worktree", "--commit", "off", "--name", "x", "-n", "1", "work", ...agent()],
      repo,
      env(),
    );
    assert.equal(off.code, 3, off.stderr);
  });

  test("an agent that asks in a worktree: the run waits on its branch, ralph answer resumes it, the answer reaches the worktree's next prompt", async () => {
    const repo = storiesRepo();
    const record = join(repo, "..", `${repo.split("/").pop()}-prompts`);
    const run = startRalph(
      [
        "run",
        "--worktree",
        "--name",
        "w",
        "-n",
        "3",
        "--completion-promise",
        "FIN",
        "work",
        ...agent(
          "--record",
          record,
          "--ask",
          "Which database?",
          "--ask-in",
          "1",
          "--promise",
          "FIN",
          "--promise-from",
          "2",
        ),
      ],
      repo,
      env(),
    );
    try {
      const status = join(repo, ".ralph", "runs", "w", "status.json");
      await waitFor(
        () => existsSync(status) && JSON.parse(readFileSync(status, "utf8")).state === "needs_human",
        "the run to wait for an answer",
        20_000,
      );
      assert.equal(JSON.parse(readFileSync(status, "utf8")).branch, "ralph/w");
      const answered = await runRalph(["answer", "w", "Postgres"], repo, env());
      assert.equal(answered.code, 0, answered.stderr + answered.stdout);
      const result = await run.done;
      assert.equal(result.code, 0, result.stderr + result.stdout);
    } finally {
      if (run.child.exitCode === null && run.child.signalCode === null) run.child.kill("SIGTERM");
    }
    assert.deepEqual(
      events(repo, "w")
        .filter((event) => event.type === "answered")
        .map((event) => event.answer),
      ["Postgres"],
    );
    assert.match(readFileSync(record, "utf8"), /Which database\?[\s\S]*Postgres/);
    assert.equal(git(repo, "rev-parse", "--abbrev-ref", "HEAD"), "main");
  });

  test("not a repository, a taken branch, --commit without --worktree, a task list missing from HEAD: exit 2, nothing created", async () => {
    const { dir: plain, cleanup } = tempProject();
    after(cleanup);
    const notRepo = await runRalph(["run", "--worktree", "--commit", "off", "work", ...agent()], plain, env());
    assert.equal(notRepo.code, 2);
    assert.match(notRepo.stderr, /^ralph: --worktree: .* is not in a git repository .*; --worktree needs one/);
    assert.equal(existsSync(join(plain, ".ralph")), false);
    const repo = storiesRepo();
    git(repo, "branch", "ralph/taken");
    const taken = await runRalph(["run", "--worktree", "--name", "taken", "work", ...agent()], repo, env());
    assert.equal(taken.code, 2);
    assert.match(taken.stderr, /^ralph: --worktree: branch ralph\/taken already exists/);
    const noWorktree = await runRalph(["run", "--commit", "iteration", "work", ...agent()], repo, env());
    assert.equal(noWorktree.code, 2);
    assert.equal(
      noWorktree.stderr,
      "ralph: --commit iteration needs --worktree: ralph commits only on a run's own branch, never on yours\n",
    );
    writeFileSync(join(repo, "todo.md"), "- [ ] uncommitted task\n");
    const missing = await runRalph(
      ["run", "--worktree", "--tasks", "todo.md", "--name", "m", "work", ...agent()],
      repo,
      env(),
    );
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /^ralph: --tasks todo\.md: in the worktree .*commit the task list first/);
    assert.equal(existsSync(join(repo, ".ralph", "runs")), false);
    assert.equal(existsSync(join(repo, ".ralph", "worktrees", "m")), false);
    assert.equal(git(repo, "branch", "--list", "ralph/m"), "");
  });
});

test("--worktree outside a git repository says so first, not that git lacks an identity", async () => {
  const dir = project();
  const noIdentity = cleanEnv({ GIT_CONFIG_GLOBAL: "/dev/null", GIT_CONFIG_NOSYSTEM: "1", HOME: dir });
  assertOneLineUsageError(
    await runRalph(["run", "-n", "1", "--worktree", "go", ...fakeAgent()], dir, noIdentity),
    /^ralph: --worktree: .* is not in a git repository/,
  );
});
