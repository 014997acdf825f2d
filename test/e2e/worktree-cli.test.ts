// `ralph clean` and doctor's worktrees section, through the built CLI on a real repository.
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { recordRunCreated } from "../../src/control/run-ledger.js";
import { readProcess } from "../../src/process/proc-table.js";
import { createWorktree } from "../../src/worktree/open-worktree.js";
import { cleanEnv, fakeAgent, runRalph } from "../helpers/cli.js";
import { git, isolateGitConfig, tempRepo } from "../helpers/git-repo.js";

after(isolateGitConfig());

/** A run directory whose status.json says it ended, or that this test process is its live runner. */
function writeRun(repo: string, id: string, live: boolean, parent?: string): void {
  const dir = join(repo, ".ralph", "runs", id);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const now = new Date().toISOString();
  const status = {
    schema_version: 1,
    run_id: id,
    mode: "run",
    pid: process.pid,
    pid_start: readProcess(process.pid)?.startTime ?? null,
    hostname: hostname(),
    cwd: repo,
    agent: "demo",
    state: live ? "running" : "ended",
    iteration: 1,
    max_iterations: 3,
    calls: 1,
    cost_usd: 0,
    tokens: { input: 0, output: 0 },
    session_id: null,
    current_task: null,
    started_at: now,
    updated_at: now,
    ended_at: live ? null : now,
    exit_reason: live ? null : "DONE",
    exit_code: live ? null : 0,
    last_action: "",
    ...(parent ? { parent } : {}),
  };
  writeFileSync(join(dir, "status.json"), JSON.stringify(status), { mode: 0o600 });
  writeFileSync(
    join(dir, "progress.txt"),
    live ? "iteration=1\n" : "iteration=1\ncompletion_reason=DONE\npromise=COMPLETE\n",
    { mode: 0o600 },
  );
  recordRunCreated(
    dir,
    id,
    null,
    live ? { pid: process.pid, pid_start: status.pid_start, hostname: hostname(), project_lock: false } : null,
  );
}

async function runWithWorktree(repo: string, id: string, live: boolean, parent?: string): Promise<string> {
  writeRun(repo, id, live, parent);
  const created = await createWorktree(repo, id);
  if (!created.ok) assert.fail(JSON.stringify(created.failure));
  return created.path;
}

const env = () => cleanEnv({ GIT_CONFIG_GLOBAL: process.env.GIT_CONFIG_GLOBAL ?? "", GIT_CONFIG_NOSYSTEM: "1" });

describe("ralph clean", () => {
  test("removes an ended run's worktree, keeps the branch and says so", async () => {
    const repo = tempRepo();
    const dir = await runWithWorktree(repo, "ended", false);
    const result = await runRalph(["clean", "ended"], repo, env());
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /removed the worktree .*\.ralph\/worktrees\/ended/);
    assert.match(result.stdout, /kept branch ralph\/ended at [0-9a-f]{12}, 0 commit\(s\) not in your HEAD/);
    assert.match(result.stdout, /git log HEAD\.\.ralph\/ended/);
    assert.equal(existsSync(dir), false);
    assert.equal(git(repo, "rev-parse", "--abbrev-ref", "ralph/ended"), "ralph/ended");
  });

  test("refuses a live run and uncommitted changes (exit 2), --force removes the changes", async () => {
    const repo = tempRepo();
    const live = await runWithWorktree(repo, "live", true);
    const refusedLive = await runRalph(["clean", "live", "--force"], repo, env());
    assert.equal(refusedLive.code, 2);
    assert.match(refusedLive.stderr, /^ralph: run live is still running; stop it first \(ralph stop live\)/);
    assert.equal(existsSync(live), true);
    const dirty = await runWithWorktree(repo, "dirty", false);
    writeFileSync(join(dirty, "half-done.txt"), "x\n");
    const refusedDirty = await runRalph(["clean", "dirty"], repo, env());
    assert.equal(refusedDirty.code, 2);
    assert.match(refusedDirty.stderr, /has 1 uncommitted change\(s\); commit them there, or clean --force/);
    assert.match(refusedDirty.stderr, /\?\? half-done\.txt/);
    assert.equal(existsSync(join(dirty, "half-done.txt")), true);
    const forced = await runRalph(["clean", "dirty", "--force"], repo, env());
    assert.equal(forced.code, 0, forced.stderr);
    assert.match(forced.stdout, /discarded 1 uncommitted change/);
    assert.equal(existsSync(dirty), false);
  });

  test("bad or unknown RUN: one line, exit 2", async () => {
    const repo = tempRepo();
    const unknown = await runRalph(["clean", "nope"], repo, env());
    assert.equal(unknown.code, 2);
    assert.equal(
      unknown.stderr,
      "ralph: RUN nope: no such run in .ralph/runs and no worktree of that name (see ralph list, ralph doctor)\n",
    );
    const bad = await runRalph(["clean", "../x"], repo, env());
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /^ralph: RUN \.\.\/x: expected a run id/);
    writeRun(repo, "plain", false);
    const noWorktree = await runRalph(["clean", "plain"], repo, env());
    assert.equal(noWorktree.code, 2);
    assert.match(noWorktree.stderr, /run plain has no worktree/);
  });
});

describe("ralph clean of many runs", () => {
  test("several runs at once, a parent with its children, and --ended (live runs and other runs kept)", async () => {
    const repo = tempRepo();
    const [a, b] = [await runWithWorktree(repo, "a", false), await runWithWorktree(repo, "b", false)];
    const parent = await runWithWorktree(repo, "p", false);
    const children = [await runWithWorktree(repo, "p-1", false, "p"), await runWithWorktree(repo, "p-2", false, "p")];
    writeRun(repo, "p-resolve-1", false, "p"); // a resolve run has no worktree of its own: skipped
    const other = await runWithWorktree(repo, "q-1", false, "q");
    const live = await runWithWorktree(repo, "live", true);
    const ended = await runWithWorktree(repo, "old", false);

    const two = await runRalph(["clean", "a", "b"], repo, env());
    assert.equal(two.code, 0, two.stderr);
    assert.deepEqual([existsSync(a), existsSync(b)], [false, false]);
    assert.equal((two.stdout.match(/^run (a|b): removed the worktree/gm) ?? []).length, 2);

    const family = await runRalph(["clean", "p"], repo, env());
    assert.equal(family.code, 0, family.stderr);
    assert.deepEqual([parent, ...children].map(existsSync), [false, false, false]);
    assert.deepEqual(family.stdout.match(/^run (\S+): removed/gm), [
      "run p: removed",
      "run p-1: removed",
      "run p-2: removed",
    ]);
    assert.equal(existsSync(other), true, "another parent's child is not cleaned");
    for (const branch of ["ralph/p", "ralph/p-1", "ralph/p-2"]) git(repo, "rev-parse", "--verify", branch);

    const all = await runRalph(["clean", "--ended"], repo, env());
    assert.equal(all.code, 0, all.stderr);
    assert.deepEqual(
      [existsSync(other), existsSync(ended), existsSync(live)],
      [false, false, true],
      "--ended keeps the live run",
    );
    const none = await runRalph(["clean", "--ended"], repo, env());
    assert.deepEqual([none.code, none.stdout], [0, "no ended run has a worktree to remove\n"]);

    const nothing = await runRalph(["clean"], repo, env());
    assert.deepEqual(
      [nothing.code, nothing.stderr],
      [2, "ralph: clean: name the runs whose worktrees to remove (RUN...), or give --ended\n"],
    );
    // One unknown run among several: nothing is cleaned.
    const c = await runWithWorktree(repo, "c", false);
    const unknown = await runRalph(["clean", "c", "nope"], repo, env());
    assert.equal(unknown.code, 2);
    assert.equal(existsSync(c), true);
  });
});

describe("ralph doctor", () => {
  test("lists worktrees whose run is gone, in text and JSON, and keeps them", async () => {
    const repo = tempRepo();
    await runWithWorktree(repo, "has-run", false);
    const orphan = (await createWorktree(repo, "orphan")) as { path: string };
    const text = await runRalph(["doctor"], repo, env());
    assert.match(text.stdout, /^worktrees {4}1 orphaned under \.ralph\/worktrees/m);
    assert.match(
      text.stdout,
      /^ {2}orphan {2}its run directory is gone \(branch ralph\/orphan\); ralph clean orphan removes it/m,
    );
    assert.doesNotMatch(text.stdout, /has-run/);
    const json = await runRalph(["doctor", "--json"], repo, env());
    const report = JSON.parse(json.stdout) as { orphaned_worktrees: Array<{ id: string; problem: string }> };
    assert.deepEqual(
      report.orphaned_worktrees.map((o) => [o.id, o.problem]),
      [["orphan", "run-gone"]],
    );
    assert.equal(existsSync(orphan.path), true, "doctor deleted nothing");
    const cleaned = await runRalph(["clean", "orphan"], repo, env());
    assert.equal(cleaned.code, 0, cleaned.stderr);
    const after = await runRalph(["doctor", "--json"], repo, env());
    assert.deepEqual((JSON.parse(after.stdout) as { orphaned_worktrees: unknown[] }).orphaned_worktrees, []);
  });
});

test("ralph clean without --force refuses a worktree holding files under a .ralph/ directory; --force removes it", async () => {
  const repo = tempRepo();
  const ran = await runRalph(
    [
      "run",
      "-n",
      "1",
      "--name",
      "w",
      "--worktree",
      "go",
      "--",
      "sh",
      "-c",
      "mkdir -p docs/.ralph && echo mine > docs/.ralph/notes.md",
    ],
    repo,
    env(),
  );
  assert.equal(ran.code, 3, ran.stderr);
  const refused = await runRalph(["clean", "w"], repo, env());
  assert.equal(refused.code, 2, refused.stdout);
  assert.match(refused.stderr, /has 1 uncommitted change\(s\)[\s\S]*docs\/\.ralph\//);
  assert.equal(readFileSync(join(repo, ".ralph", "worktrees", "w", "docs", ".ralph", "notes.md"), "utf8"), "mine\n");
  mkdirSync(join(repo, ".ralph", "worktrees", "w", ".ralph"), { recursive: true });
  writeFileSync(join(repo, ".ralph", "worktrees", "w", ".ralph", "x"), "");
  const forced = await runRalph(["clean", "w", "--force"], repo, env());
  assert.equal(forced.code, 0, forced.stderr);
  // Known-false control: a worktree with nothing uncommitted is removed without --force.
  await runRalph(["run", "-n", "1", "--name", "v", "--worktree", "go", ...fakeAgent()], repo, env());
  assert.equal((await runRalph(["clean", "v"], repo, env())).code, 0);
});
