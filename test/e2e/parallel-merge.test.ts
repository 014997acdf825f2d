// The merge queue of `ralph run --parallel` on real repositories: DONE children merged into the integration
// branch ralph/<id>, conflicts and failing checks resolved by the agent (here a script), what cannot be resolved
// undone, a parent killed mid-merge continued, and the person's checkout byte for byte as it was throughout.
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cleanEnv, readEvents, readStatus, runRalph, startRalph } from "../helpers/cli.js";
import { waitForFile } from "../helpers/wait.js";
import { checkoutSnapshot, git, isolateGitConfig, storiesRepo } from "../helpers/git-repo.js";

after(isolateGitConfig());

const env = (extra: Record<string, string> = {}) =>
  cleanEnv({ GIT_CONFIG_GLOBAL: process.env.GIT_CONFIG_GLOBAL ?? "", GIT_CONFIG_NOSYSTEM: "1", ...extra });
const runDir = (repo: string, id: string) => join(repo, ".ralph", "runs", id);

// One prd.json story per line: the parent must keep this layout when it marks them.
const ONE_LINE_PRD =
  '{"userStories": [\n  {"id": "US-1", "title": "one", "passes": false, "priority": 1},\n  {"id": "US-2", "title": "two", "passes": false, "priority": 2},\n  {"id": "US-3", "title": "three", "passes": false, "priority": 3}\n]}\n';

/**
 * The scripted agent. A story prompt: US-1 and US-2 both rewrite line 1 of shared.txt, US-3 writes three.txt,
 * each then marks its story done. A resolve prompt: RESOLVE=fix writes the reconciled shared.txt (after
 * waiting for $HOLD, when set), RESOLVE=fail leaves the markers in; both note the prompt in resolves.log.
 */
function mergeAgent(repo: string): string {
  const agent = join(repo, "..", `${repo.split("/").pop()}-merge-agent.cjs`);
  writeFileSync(
    agent,
    `const fs = require("fs"); let prompt = "";
process.stdin.on("data", (d) => (prompt += d)).on("end", () => {
  if (prompt.includes("You are resolving a merge")) {
    fs.appendFileSync(process.env.RESOLVES_LOG, JSON.stringify(prompt) + "\\n");
    const finish = () => {
      if (process.env.RESOLVE === "fix") fs.writeFileSync("shared.txt", "line 1 by one and two\\nline 2\\n");
      if (process.env.RESOLVE === "fix-check") fs.writeFileSync("two.txt", "two, fixed\\n");
      console.log("resolved");
    };
    if (process.env.HOLD && !fs.existsSync(process.env.HOLD)) {
      fs.writeFileSync(process.env.HOLD + ".started", "");
      const wait = setInterval(() => { if (fs.existsSync(process.env.HOLD)) { clearInterval(wait); finish(); } }, 50);
      return;
    }
    return finish();
  }
  const id = /## Current task\\n\\n([^:\\n]+):/.exec(prompt)[1];
  if (process.env.ATTACK && id === "US-1") {
    // A hostile agent marks every story done wherever it finds the task list: the person's checkout (through
    // the shared git directory), every worktree (the parent's among them), and it moves the parent's branch.
    const { execFileSync } = require("child_process");
    const path = require("path");
    const markAll = (file) => { if (!fs.existsSync(file)) return; const prd = JSON.parse(fs.readFileSync(file, "utf8")); for (const s of prd.userStories) s.passes = true; fs.writeFileSync(file, JSON.stringify(prd) + "\\n"); };
    markAll(path.join(path.resolve(execFileSync("git", ["rev-parse", "--git-common-dir"]).toString().trim()), "..", "prd.json"));
    for (const line of execFileSync("git", ["worktree", "list", "--porcelain"]).toString().split("\\n")) if (line.startsWith("worktree ")) markAll(path.join(line.slice(9), "prd.json"));
    markAll("prd.json");
    execFileSync("git", ["-c", "user.name=x", "-c", "user.email=x@x", "commit", "-qam", "all done"]);
    execFileSync("git", ["update-ref", "refs/heads/ralph/" + process.env.ATTACK, "HEAD"]);
    fs.writeFileSync(process.env.RESOLVES_LOG + ".attacked", "");
  }
  if (process.env.STORY_FILES === "own") fs.writeFileSync(id === "US-1" ? "one.txt" : id === "US-2" ? "two.txt" : "three.txt", id + "\\n");
  else if (id === "US-3") fs.writeFileSync("three.txt", "three\\n");
  else fs.writeFileSync("shared.txt", "line 1 by " + (id === "US-1" ? "one" : "two") + "\\nline 2\\n");
  const prd = JSON.parse(fs.readFileSync("prd.json", "utf8"));
  for (const story of prd.userStories) if (story.id === id) story.passes = true;
  fs.writeFileSync("prd.json", JSON.stringify(prd, null, 2) + "\\n");
  console.log("did " + id);
});`,
  );
  return agent;
}

/** A repository whose HEAD holds one-line stories and shared.txt; the person also has an uncommitted note. */
function mergeRepo(): { repo: string; agent: string; log: string; before: ReturnType<typeof snapshot> } {
  const repo = storiesRepo({ "prd.json": ONE_LINE_PRD, "shared.txt": "line 1\nline 2\n" });
  writeFileSync(join(repo, "notes.txt"), "the person's own uncommitted note\n");
  return {
    repo,
    agent: mergeAgent(repo),
    log: join(repo, "..", `${repo.split("/").pop()}-resolves.log`),
    before: snapshot(repo),
  };
}

/** The person's side: HEAD, branch, index bytes, `git status`, and the bytes of prd.json and notes.txt. */
function snapshot(repo: string) {
  return {
    ...checkoutSnapshot(repo),
    prd: readFileSync(join(repo, "prd.json"), "utf8"),
    notes: readFileSync(join(repo, "notes.txt"), "utf8"),
  };
}

/** The integration worktree has nothing half done: no merge in progress, no conflict marker, `git status` clean. */
function cleanIntegration(repo: string, run: string): void {
  const worktree = join(repo, ".ralph", "worktrees", run);
  assert.equal(git(worktree, "status", "--porcelain", "--untracked-files=all"), "");
  assert.throws(() => git(worktree, "rev-parse", "-q", "--verify", "MERGE_HEAD"), "no merge in progress");
  // git grep exits 1 when nothing matches.
  assert.throws(
    () => git(repo, "grep", "-l", "-e", "^<<<<<<<", `ralph/${run}`),
    (error: { status?: number }) => error.status === 1,
    "no conflict marker on the branch",
  );
}

function flags(repo: string, ref: string): Record<string, boolean> {
  const prd = JSON.parse(git(repo, "show", `${ref}:prd.json`)) as {
    userStories: Array<{ id: string; passes: boolean }>;
  };
  return Object.fromEntries(prd.userStories.map((story) => [story.id, story.passes]));
}

const NO_MARKERS = "! grep -q '^<<<<<<<' shared.txt";

describe("ralph run --parallel: the merge queue", () => {
  test("three stories, two on the same line: all three on ralph/m after one resolve iteration, checks green, the person's checkout byte-identical", async () => {
    const { repo, agent, log, before } = mergeRepo();
    // The comparison is known to catch an edit of the person's prd.json (a known-false control).
    writeFileSync(join(repo, "prd.json"), ONE_LINE_PRD.replace('"passes": false', '"passes": true'));
    assert.notDeepEqual(snapshot(repo), before);
    writeFileSync(join(repo, "prd.json"), ONE_LINE_PRD);
    assert.deepEqual(snapshot(repo), before);

    const result = await runRalph(
      [
        "run",
        "--tasks",
        "prd.json",
        "--parallel",
        "2",
        "--check",
        NO_MARKERS,
        "--name",
        "m",
        "work",
        "--",
        process.execPath,
        agent,
      ],
      repo,
      env({ RESOLVE: "fix", RESOLVES_LOG: log }),
    );
    assert.equal(result.code, 0, result.stderr + result.stdout);
    assert.equal(readStatus(runDir(repo, "m")).exit_reason, "DONE");
    assert.deepEqual(
      snapshot(repo),
      before,
      "the person's checkout, index, branch, prd.json and note are as they were",
    );
    // All three stories' work and marks on the integration branch, the task file's one-line layout kept.
    assert.deepEqual(flags(repo, "ralph/m"), { "US-1": true, "US-2": true, "US-3": true });
    assert.equal(
      git(repo, "show", "ralph/m:prd.json") + "\n",
      ONE_LINE_PRD.replace(/"passes": false/g, '"passes": true'),
    );
    assert.equal(git(repo, "show", "ralph/m:shared.txt"), "line 1 by one and two\nline 2");
    assert.equal(git(repo, "show", "ralph/m:three.txt"), "three");
    for (const child of ["m-1", "m-2", "m-3"]) git(repo, "merge-base", "--is-ancestor", `ralph/${child}`, "ralph/m");
    cleanIntegration(repo, "m");
    const events = readEvents(runDir(repo, "m"));
    const resolves = events.filter((event) => event.type === "resolve_started");
    assert.equal(resolves.length, 1, "one resolve iteration");
    assert.deepEqual(resolves[0]?.conflicts, ["shared.txt"]);
    const merged = events.filter((event) => event.type === "child_merged");
    assert.deepEqual(merged.map((event) => event.task).sort(), ["US-1", "US-2", "US-3"]);
    assert.deepEqual(merged.map((event) => event.resolves).sort(), [0, 0, 1]);
    // The resolve prompt named the conflicted file and both stories.
    const prompt = JSON.parse(readFileSync(log, "utf8").split("\n")[0] ?? "") as string;
    assert.match(prompt, /## Conflicted files\n\n- shared\.txt\n/);
    assert.match(prompt, /## The task being merged\n\nUS-[12]: (one|two)\n/);
    assert.match(prompt, /## Tasks already on the integration branch\n\n- US-[12]: (one|two)\n/);
    assert.equal(readStatus(runDir(repo, "m-resolve-1")).parent, "m");
    assert.match(result.stdout, /^report: ralph report m; merge it into your branch: ralph land m/m);

    // The report: JSON for machines, Markdown on stdout and in $GITHUB_STEP_SUMMARY.
    const json = await runRalph(["report", "m", "--format", "json"], repo, env());
    assert.equal(json.code, 0, json.stderr);
    const report = JSON.parse(json.stdout) as {
      outcome: string;
      branch: string;
      base_branch: string;
      diffstat: { files_changed: number };
      children: Array<{ run: string; merge: string | null; resolves: number }>;
    };
    assert.deepEqual(
      [report.outcome, report.branch, report.base_branch, report.diffstat.files_changed],
      ["DONE", "ralph/m", "main", 3],
    );
    assert.deepEqual(report.children.map((child) => [child.run, child.merge]).sort(), [
      ["m-1", "merged"],
      ["m-2", "merged"],
      ["m-3", "merged"],
      ["m-resolve-1", null],
    ]);
    const summary = join(repo, "..", `${repo.split("/").pop()}-summary.md`);
    writeFileSync(summary, "earlier step\n");
    const md = await runRalph(["report", "m"], repo, env({ GITHUB_STEP_SUMMARY: summary }));
    assert.equal(md.code, 0, md.stderr);
    assert.match(md.stdout, /^# ralph run m: DONE\n/);
    assert.match(md.stdout, /\| Branch \| `ralph\/m` from `main` /);
    assert.equal(readFileSync(summary, "utf8"), `earlier step\n${md.stdout}`);
    const bad = await runRalph(["report", "m", "--format", "html"], repo, env());
    assert.deepEqual([bad.code, bad.stderr], [2, 'ralph: --format: expected md or json, got "html"\n']);
    assert.deepEqual(snapshot(repo), before);

    // Landing it, when asked, is the first change to the person's branch: the whole work and the marks, one merge.
    const landed = await runRalph(["land", "m"], repo, env());
    assert.equal(landed.code, 0, landed.stderr);
    assert.equal(git(repo, "rev-parse", "HEAD^2"), git(repo, "rev-parse", "ralph/m"));
    assert.equal(
      readFileSync(join(repo, "prd.json"), "utf8"),
      ONE_LINE_PRD.replace(/"passes": false/g, '"passes": true'),
    );
    assert.equal(readFileSync(join(repo, "notes.txt"), "utf8"), before.notes);
  });

  test("a resolve that cannot succeed: the merge is undone (clean ralph/u, no markers), the task reopened with the reason, FAILED", async () => {
    const { repo, agent, log, before } = mergeRepo();
    const result = await runRalph(
      [
        "run",
        "--tasks",
        "prd.json",
        "--parallel",
        "2",
        "--max-resolve",
        "1",
        "--name",
        "u",
        "work",
        "--",
        process.execPath,
        agent,
      ],
      repo,
      env({ RESOLVE: "fail", RESOLVES_LOG: log }),
    );
    assert.equal(result.code, 1, result.stderr + result.stdout);
    const abandoned = readEvents(runDir(repo, "u")).filter((event) => event.type === "merge_abandoned");
    assert.equal(abandoned.length, 1);
    const task = abandoned[0]?.task as string;
    assert.match(abandoned[0]?.reason as string, /^conflicts in shared\.txt, still after 1 resolve iteration\(s\)$/);
    assert.equal(abandoned[0]?.resolves, 1);
    assert.match(result.stdout, new RegExp(`task ${task} reopened: conflicts in shared\\.txt`));
    assert.match(
      readStatus(runDir(repo, "u")).last_action as string,
      new RegExp(`^1 task\\(s\\) left pending: merge of ralph/u-\\d abandoned: conflicts in shared\\.txt`),
    );
    const other = task === "US-1" ? "US-2" : "US-1";
    assert.deepEqual(flags(repo, "ralph/u"), { [task]: false, [other]: true, "US-3": true } as Record<string, boolean>);
    cleanIntegration(repo, "u");
    assert.deepEqual(snapshot(repo), before);
  });

  test("a check that fails only on the merged tree triggers a resolve iteration, whose fix is merged", async () => {
    const { repo, agent, log, before } = mergeRepo();
    // One.txt and two.txt together fail until two.txt says "fixed", on the integration branch only: a child may
    // start from a tree that already holds an earlier child's merge, and a child whose check fails never ends DONE.
    const check =
      "if [ \"$(git rev-parse --abbrev-ref HEAD)\" = ralph/c ] && [ -e one.txt ] && [ -e two.txt ] && ! grep -q fixed two.txt; then echo 'one and two clash'; exit 1; fi";
    const result = await runRalph(
      [
        "run",
        "--tasks",
        "prd.json",
        "--parallel",
        "1",
        "--max-runtime",
        "1h",
        "--check",
        check,
        "--name",
        "c",
        "work",
        "--",
        process.execPath,
        agent,
      ],
      repo,
      env({ STORY_FILES: "own", RESOLVE: "fix-check", RESOLVES_LOG: log }),
    );
    assert.equal(result.code, 0, result.stderr + result.stdout);
    const resolves = readEvents(runDir(repo, "c")).filter((event) => event.type === "resolve_started");
    assert.deepEqual(
      resolves.map((event) => [event.task, event.checks_failed, event.conflicts]),
      [["US-2", true, []]],
      result.stdout,
    );
    // The resolve run is bounded, as each child is, by what was left of the parent's hour when it started.
    for (const run of ["c-2", "c-resolve-1"]) {
      const limit = (
        JSON.parse(readFileSync(join(runDir(repo, run), "settings.json"), "utf8")) as { maxRuntimeMs: number | null }
      ).maxRuntimeMs;
      assert.ok(
        limit !== null && limit < 3_600_000 && limit > 3_000_000 && limit % 1000 === 0,
        `${run}: maxRuntimeMs ${limit}`,
      );
    }
    assert.match(
      JSON.parse(readFileSync(log, "utf8").split("\n")[0] ?? "") as string,
      /## Check output\n\n.*\n\n```\n.*exit 1\none and two clash\n```/,
    );
    assert.equal(git(repo, "show", "ralph/c:two.txt"), "two, fixed");
    assert.deepEqual(flags(repo, "ralph/c"), { "US-1": true, "US-2": true, "US-3": true });
    cleanIntegration(repo, "c");
    assert.deepEqual(snapshot(repo), before);
  });

  test("SIGKILL of the parent during a resolve, then ralph continue: the half merge is undone, made again and resolved", async () => {
    const { repo, agent, log, before } = mergeRepo();
    const hold = join(repo, "..", `${repo.split("/").pop()}-hold`);
    const args = [
      "run",
      "--tasks",
      "prd.json",
      "--parallel",
      "2",
      "--grace",
      "1s",
      "--name",
      "k",
      "work",
      "--",
      process.execPath,
      agent,
    ];
    const parent = startRalph(args, repo, env({ RESOLVE: "fix", RESOLVES_LOG: log, HOLD: hold }));
    try {
      await waitForFile(`${hold}.started`, 30_000);
      assert.ok(existsSync(join(repo, ".ralph", "worktrees", "k", ".git")));
      parent.child.kill("SIGKILL");
      await parent.done;
    } finally {
      if (parent.child.exitCode === null && parent.child.signalCode === null) parent.child.kill("SIGKILL");
    }
    // Killed mid-merge: the integration worktree holds the half merge, the person's checkout nothing.
    assert.ok(git(join(repo, ".ralph", "worktrees", "k"), "rev-parse", "-q", "--verify", "MERGE_HEAD"));
    assert.deepEqual(snapshot(repo), before);
    // While no parent watches, something moves its branch to a child's (whose prd.json is reformatted).
    git(repo, "update-ref", "refs/heads/ralph/k", "refs/heads/ralph/k-1");
    writeFileSync(hold, "");
    const continued = await runRalph(["continue", "k"], repo, env({ RESOLVE: "fix", RESOLVES_LOG: log }));
    assert.equal(continued.code, 0, continued.stderr + continued.stdout);
    assert.match(continued.stdout, /ended DONE before; its merge into ralph\/k is made now/);
    assert.deepEqual(flags(repo, "ralph/k"), { "US-1": true, "US-2": true, "US-3": true });
    assert.equal(git(repo, "show", "ralph/k:shared.txt"), "line 1 by one and two\nline 2");
    assert.equal(readEvents(runDir(repo, "k")).filter((event) => event.type === "child_merged").length, 3);
    assert.equal(
      git(repo, "show", "ralph/k:prd.json") + "\n",
      ONE_LINE_PRD.replace(/"passes": false/g, '"passes": true'),
      "the parent's own task list, not the moved branch's",
    );
    cleanIntegration(repo, "k");
    assert.deepEqual(snapshot(repo), before);
  });

  test("SIGTERM to the parent during a resolve: the merge is undone before it exits (INTERRUPTED), continue makes it", async () => {
    const { repo, agent, log, before } = mergeRepo();
    const hold = join(repo, "..", `${repo.split("/").pop()}-hold`);
    const parent = startRalph(
      [
        "run",
        "--tasks",
        "prd.json",
        "--parallel",
        "2",
        "--grace",
        "1s",
        "--name",
        "t",
        "work",
        "--",
        process.execPath,
        agent,
      ],
      repo,
      env({ RESOLVE: "fix", RESOLVES_LOG: log, HOLD: hold }),
    );
    let result;
    try {
      await waitForFile(`${hold}.started`, 30_000);
      parent.child.kill("SIGTERM");
      result = await parent.done;
    } finally {
      if (parent.child.exitCode === null && parent.child.signalCode === null) parent.child.kill("SIGKILL");
    }
    assert.equal(result.signal, "SIGTERM", result.stdout + result.stderr);
    assert.equal(readStatus(runDir(repo, "t")).exit_reason, "INTERRUPTED");
    assert.match(result.stdout, /merge of ralph\/t-\d undone: the run is ending/);
    assert.match(result.stdout, /[12] DONE child\(ren\) not merged yet: ralph continue t merges them/);
    cleanIntegration(repo, "t");
    assert.deepEqual(snapshot(repo), before);
    writeFileSync(hold, "");
    const continued = await runRalph(["continue", "t"], repo, env({ RESOLVE: "fix", RESOLVES_LOG: log }));
    assert.equal(continued.code, 0, continued.stderr + continued.stdout);
    assert.deepEqual(flags(repo, "ralph/t"), { "US-1": true, "US-2": true, "US-3": true });
    cleanIntegration(repo, "t");
    assert.deepEqual(snapshot(repo), before);
  });

  test("a child's agent that marks every task done (the person's prd.json, the parent's worktree and branch) changes nothing the parent decides", async () => {
    const { repo, agent, log } = mergeRepo();
    const result = await runRalph(
      ["run", "--tasks", "prd.json", "--parallel", "1", "--name", "a", "work", "--", process.execPath, agent],
      repo,
      env({ STORY_FILES: "own", ATTACK: "a", RESOLVES_LOG: log }),
    );
    assert.equal(result.code, 0, result.stderr + result.stdout);
    // Control: the attack ran and reached what it aimed at (the person's own prd.json now says all done)...
    assert.ok(existsSync(`${log}.attacked`));
    assert.match(
      readFileSync(join(repo, "prd.json"), "utf8"),
      /^\{"userStories":\[\{"id":"US-1","title":"one","passes":true/,
    );
    // ...yet the parent started a child for each task, and its branch holds its own marks in its own layout.
    assert.deepEqual(
      readEvents(runDir(repo, "a"))
        .filter((event) => event.type === "child_started")
        .map((event) => event.task),
      ["US-1", "US-2", "US-3"],
    );
    assert.deepEqual(
      readEvents(runDir(repo, "a"))
        .filter((event) => event.type === "child_merged")
        .map((event) => event.task),
      ["US-1", "US-2", "US-3"],
    );
    assert.equal(
      git(repo, "show", "ralph/a:prd.json") + "\n",
      ONE_LINE_PRD.replace(/"passes": false/g, '"passes": true'),
    );
    for (const file of ["one.txt", "two.txt", "three.txt"]) assert.ok(git(repo, "show", `ralph/a:${file}`));
    cleanIntegration(repo, "a");
  });
});
