// `ralph run --parallel N --tasks FILE` on real repositories: child runs in worktrees, the parent's task
// list, its limits, and the end of every child's tree when the parent is stopped, signalled or killed.
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cleanEnv, FAKE_AGENT, readEvents, readStatus, runRalph, startRalph } from "../helpers/cli.js";
import { waitFor, waitForFile } from "../helpers/wait.js";
import { git, isolateGitConfig, storiesRepo } from "../helpers/git-repo.js";

after(isolateGitConfig());

const env = () => cleanEnv({ GIT_CONFIG_GLOBAL: process.env.GIT_CONFIG_GLOBAL ?? "", GIT_CONFIG_NOSYSTEM: "1" });
/** The stories' flags on parent run `run`'s integration branch (the person's own prd.json is never changed). */
function passes(repo: string, run: string): Record<string, boolean> {
  assert.doesNotMatch(
    readFileSync(join(repo, "prd.json"), "utf8"),
    /"passes": true/,
    "the person's prd.json is untouched",
  );
  const prd = JSON.parse(git(repo, "show", `ralph/${run}:prd.json`)) as {
    userStories: Array<{ id: string; passes: boolean }>;
  };
  return Object.fromEntries(prd.userStories.map((story) => [story.id, story.passes]));
}

const runDir = (repo: string, id: string) => join(repo, ".ralph", "runs", id);

/** The most child runs the parent's events show running at once. */
function peakChildren(events: Array<Record<string, unknown>>): number {
  let running = 0;
  let peak = 0;
  for (const event of events) {
    if (event.type === "child_started") peak = Math.max(peak, ++running);
    if (event.type === "child_ended") running--;
  }
  return peak;
}

/** A node agent that marks the story named in its prompt done in prd.json, unless `unless` (JS run first) returns. */
function storyAgent(repo: string, unless: string): string {
  const agent = join(repo, "..", `${repo.split("/").pop()}-agent.cjs`);
  writeFileSync(
    agent,
    `const fs = require("fs"); let prompt = "";
process.stdin.on("data", (d) => (prompt += d)).on("end", () => {
  const id = /## Current task\\n\\n([^:\\n]+):/.exec(prompt)[1];
  ${unless}
  const prd = JSON.parse(fs.readFileSync("prd.json", "utf8"));
  for (const story of prd.userStories) if (story.id === id) story.passes = true;
  fs.writeFileSync("prd.json", JSON.stringify(prd, null, 2) + "\\n");
  console.log("did " + id);
});`,
  );
  return agent;
}

describe("ralph run --parallel", () => {
  test("--parallel 2 over three stories: DONE, three branches, the parent's prd.json complete, children listed under it", async () => {
    const repo = storiesRepo();
    const result = await runRalph(
      ["run", "--agent", "demo", "--tasks", "prd.json", "--parallel", "2", "--name", "p", "work"],
      repo,
      env(),
    );
    assert.equal(result.code, 0, result.stderr + result.stdout);
    assert.equal(readStatus(runDir(repo, "p")).exit_reason, "DONE");
    assert.match(result.stdout, /^DONE: the children finished every task in prd\.json$/m);
    // The parent supervises its children's agents: its status names the same mode as theirs.
    assert.equal(readStatus(runDir(repo, "p")).supervision, readStatus(runDir(repo, "p-1")).supervision);
    assert.deepEqual(passes(repo, "p"), { "US-1": true, "US-2": true, "US-3": true }, result.stdout);
    const events = readEvents(runDir(repo, "p"));
    const started = events.filter((event) => event.type === "child_started");
    assert.deepEqual(started.map((event) => [event.child, event.task]).sort(), [
      ["p-1", "US-1"],
      ["p-2", "US-2"],
      ["p-3", "US-3"],
    ]);
    assert.deepEqual(
      events.filter((event) => event.type === "child_ended").map((event) => event.reason),
      ["DONE", "DONE", "DONE"],
    );
    assert.ok(peakChildren(events) <= 2, "never more than 2 children at once");
    for (const [child, story] of [
      ["p-1", "US-1"],
      ["p-2", "US-2"],
      ["p-3", "US-3"],
    ] as const) {
      assert.match(
        git(repo, "log", "-1", "--format=%s", `ralph/${child}`),
        new RegExp(`^ralph\\(${child}\\): iteration 1: ${story}: `),
      );
      // Each child started from the integration branch as it was then, and marked its own story done there.
      const onBranch = JSON.parse(git(repo, "show", `ralph/${child}:prd.json`)) as {
        userStories: Array<{ id: string; passes: boolean }>;
      };
      assert.equal(onBranch.userStories.find((s) => s.id === story)?.passes, true);
      git(repo, "merge-base", "--is-ancestor", `ralph/${child}`, "ralph/p");
      assert.equal(readStatus(runDir(repo, child)).parent, "p");
    }
    assert.equal(git(repo, "rev-parse", "--abbrev-ref", "HEAD"), "main");
    const list = JSON.parse((await runRalph(["list", "--json"], repo, env())).stdout) as {
      runs: Array<{ id: string; parent: string | null }>;
    };
    assert.deepEqual(list.runs.map((run) => [run.id, run.parent]).sort(), [
      ["p", null],
      ["p-1", "p"],
      ["p-2", "p"],
      ["p-3", "p"],
    ]);
    const text = (await runRalph(["list"], repo, env())).stdout.split("\n");
    assert.match(text[1] ?? "", /^p +DONE/);
    assert.deepEqual(
      text
        .slice(2, 5)
        .map((line) => /^ {2}(p-\d) +DONE .* ralph\/p-\d$/.exec(line)?.[1])
        .sort(),
      ["p-1", "p-2", "p-3"],
    );
    const status = JSON.parse((await runRalph(["status", "p", "--json"], repo, env())).stdout) as {
      children: Array<{ id: string; state: string }>;
    };
    assert.deepEqual(status.children.map((child) => [child.id, child.state]).sort(), [
      ["p-1", "DONE"],
      ["p-2", "DONE"],
      ["p-3", "DONE"],
    ]);
    assert.equal(
      (JSON.parse((await runRalph(["status", "--json"], repo, env())).stdout) as { id: string }).id,
      "p",
      "without RUN: the parent, not its last child",
    );
    // A child continued on its own keeps its worktree, branch and parent.
    const continued = await runRalph(["continue", "p-1", "-n", "2"], repo, env());
    assert.equal(continued.code, 0, continued.stderr + continued.stdout);
    assert.deepEqual(
      [
        readStatus(runDir(repo, "p-1")).parent,
        readStatus(runDir(repo, "p-1")).branch,
        readStatus(runDir(repo, "p-1")).exit_reason,
      ],
      ["p", "ralph/p-1", "DONE"],
    );
  });

  test("--parallel over a list with nothing open at its start: NO_WORK, no child started", async () => {
    const repo = storiesRepo();
    writeFileSync(
      join(repo, "prd.json"),
      readFileSync(join(repo, "prd.json"), "utf8").replace(/"passes": false/g, '"passes": true'),
    );
    git(repo, "commit", "-qam", "all done");
    const result = await runRalph(
      ["run", "--agent", "demo", "--tasks", "prd.json", "--parallel", "2", "--name", "p", "work"],
      repo,
      env(),
    );
    assert.equal(result.code, 0, result.stderr + result.stdout);
    assert.deepEqual(
      [readStatus(runDir(repo, "p")).exit_reason, readStatus(runDir(repo, "p")).iteration],
      ["NO_WORK", 0],
    );
    assert.match(result.stdout, /^NO_WORK: every task in prd\.json was already done$/m);
  });

  test("a child that fails leaves its task pending and the parent says why (FAILED, exit 1)", async () => {
    const repo = storiesRepo();
    // An agent that does its story, except US-2, where it fails.
    const agent = storyAgent(repo, `if (id === "US-2") { console.log("cannot do " + id); process.exit(1); }`);
    const result = await runRalph(
      [
        "run",
        "--tasks",
        "prd.json",
        "--parallel",
        "2",
        "--max-failures",
        "1",
        "--name",
        "f",
        "work",
        "--",
        process.execPath,
        agent,
      ],
      repo,
      env(),
    );
    assert.equal(result.code, 1, result.stderr + result.stdout);
    assert.deepEqual(passes(repo, "f"), { "US-1": true, "US-2": false, "US-3": true });
    assert.match(
      result.stdout,
      /child f-2 ended FAILED; task US-2 stays pending: 1 consecutive failed iterations, last: exit 1/,
    );
    assert.match(
      readStatus(runDir(repo, "f")).last_action as string,
      /^1 task\(s\) left pending: child f-2 ended FAILED: /,
    );
    const ended = readEvents(runDir(repo, "f")).filter((event) => event.type === "child_ended");
    assert.deepEqual(ended.map((event) => [event.task, event.reason]).sort(), [
      ["US-1", "DONE"],
      ["US-2", "FAILED"],
      ["US-3", "DONE"],
    ]);
  });

  test("--max-cost counts every child's spend: BUDGET_EXCEEDED before the third child", async () => {
    const repo = storiesRepo();
    // The demo agent reports $0.0123 per iteration: two children reach $0.02.
    const result = await runRalph(
      ["run", "--agent", "demo", "--tasks", "prd.json", "--parallel", "1", "--max-cost", "0.02", "--name", "b", "work"],
      repo,
      env(),
    );
    assert.equal(result.code, 3, result.stderr + result.stdout);
    const status = readStatus(runDir(repo, "b"));
    assert.deepEqual([status.exit_reason, status.cost_usd, status.iteration], ["BUDGET_EXCEEDED", 0.0246, 2]);
    assert.deepEqual(passes(repo, "b"), { "US-1": true, "US-2": true, "US-3": false });
    // The second child was given what was left of the budget, not the whole of it.
    assert.equal(JSON.parse(readFileSync(join(runDir(repo, "b-2"), "settings.json"), "utf8")).maxCostUsd, 0.0077);
  });

  test("PAUSE on the parent holds new children until it is removed; running ones go on", async () => {
    const repo = storiesRepo();
    const go = join(repo, "..", `${repo.split("/").pop()}-go`);
    const parent = startRalph(
      [
        "run",
        "--tasks",
        "prd.json",
        "--parallel",
        "1",
        "-n",
        "1",
        "--name",
        "z",
        "work",
        "--",
        process.execPath,
        FAKE_AGENT,
        "--wait-for",
        go,
      ],
      repo,
      env(),
    );
    await waitForFile(`${go}.started`, 20_000);
    assert.equal((await runRalph(["pause", "z"], repo, env())).code, 0);
    await waitFor(
      () => readEvents(runDir(repo, "z")).some((event) => event.type === "paused"),
      "the parent to pause",
      10_000,
    );
    writeFileSync(go, "");
    // Once the parent has seen its child end while paused, it says so in status.json; nothing new started.
    await waitFor(
      () => {
        const status = readStatus(runDir(repo, "z"));
        return (
          status.state === "paused" &&
          status.current_task === null &&
          existsSync(join(runDir(repo, "z-1"), "status.json")) &&
          readStatus(runDir(repo, "z-1")).state === "ended"
        );
      },
      "the first child to end while the parent is paused",
      20_000,
    );
    assert.deepEqual(
      readEvents(runDir(repo, "z"))
        .filter((event) => event.type === "child_started")
        .map((event) => event.child),
      ["z-1"],
    );
    assert.equal((await runRalph(["resume", "z"], repo, env())).code, 0);
    const result = await parent.done;
    // The fake agent marks nothing done: each child ends MAX_ITERATIONS and the parent FAILED, after all three ran.
    assert.equal(result.code, 1, result.stdout + result.stderr);
    assert.deepEqual(
      readEvents(runDir(repo, "z"))
        .filter((event) => event.type === "child_started")
        .map((event) => event.child),
      ["z-1", "z-2", "z-3"],
    );
  });

  test("a child that asks waits for ralph answer (given no RUN); the parent's own events reach its --notify targets", async () => {
    const repo = storiesRepo({
      "prd.json": `${JSON.stringify({ userStories: [{ id: "US-1", title: "one", passes: false }] }, null, 2)}\n`,
    });
    const notified = join(repo, "..", `${repo.split("/").pop()}-notified.jsonl`);
    const command = `${process.execPath} -e "require('fs').appendFileSync(process.argv[1], require('fs').readFileSync(0) + '\\n')" ${notified}`;
    // Iteration 1 of each child asks; its second iteration marks its story done.
    const agent = storyAgent(
      repo,
      `if (!prompt.includes("Yes, go on")) { console.log("<ask>May I do " + id + "?</ask>"); return; }`,
    );
    const parent = startRalph(
      [
        "run",
        "--tasks",
        "prd.json",
        "--parallel",
        "1",
        "-n",
        "3",
        "--name",
        "q",
        "--notify",
        command,
        "work",
        "--",
        process.execPath,
        agent,
      ],
      repo,
      env(),
    );
    let result;
    try {
      // The parent tells where a person looks that its child waits (the child itself prints nowhere).
      const parentLog = join(runDir(repo, "q"), "run.log");
      await waitFor(
        () => existsSync(parentLog) && readFileSync(parentLog, "utf8").includes("child q-1 asks"),
        "the parent to say its child asks",
        20_000,
      );
      const answered = await runRalph(["answer", "Yes, go on"], repo, env());
      assert.equal(answered.code, 0, answered.stderr + answered.stdout);
      assert.match(answered.stdout, /q-1/);
      result = await parent.done;
    } finally {
      if (parent.child.exitCode === null && parent.child.signalCode === null) parent.child.kill("SIGTERM");
    }
    assert.equal(result.code, 0, result.stderr + result.stdout);
    assert.match(result.stdout, /child q-1 asks: "May I do US-1\?"; it waits for: ralph answer q-1 TEXT/);
    assert.deepEqual(passes(repo, "q"), { "US-1": true });
    const heard = readFileSync(notified, "utf8")
      .split("\n")
      .filter((line) => line.trim() !== "")
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    // The child's question and both endings: the parent's exactly as in its events.jsonl.
    assert.deepEqual(
      heard.filter((event) => event.type === "needs_human").map((event) => [event.run, event.question]),
      [["q-1", "May I do US-1?"]],
    );
    assert.deepEqual(
      heard
        .filter((event) => event.type === "run_ended")
        .map((event) => event.run)
        .sort(),
      ["q", "q-1"],
    );
    assert.deepEqual(
      heard.find((event) => event.run === "q" && event.type === "run_ended"),
      readEvents(runDir(repo, "q")).find((event) => event.type === "run_ended"),
    );
  });

  test("usage errors: --parallel without --tasks, or with a task list HEAD does not hold: exit 2, nothing created", async () => {
    const repo = storiesRepo();
    const noTasks = await runRalph(["run", "--agent", "demo", "--parallel", "2", "work"], repo, env());
    assert.equal(noTasks.code, 2);
    assert.equal(noTasks.stderr, "ralph: --parallel needs --tasks FILE: each child run works on one of its tasks\n");
    writeFileSync(join(repo, "todo.md"), "- [ ] a\n- [ ] b\n");
    const notInHead = await runRalph(
      ["run", "--agent", "demo", "--tasks", "todo.md", "--parallel", "2", "work"],
      repo,
      env(),
    );
    assert.equal(notInHead.code, 2);
    assert.match(
      notInHead.stderr,
      /^ralph: --tasks todo\.md: not in HEAD; each --parallel child works in a worktree from HEAD/,
    );
    const resolve = await runRalph(["run", "--agent", "demo", "--resolve", "work"], repo, env());
    assert.deepEqual(
      [resolve.code, resolve.stderr],
      [2, "ralph: --resolve is set by a --parallel run on its resolve runs, together with --parent and --name\n"],
    );
    // A child run is started only through the internal child-run command, never through ralph run.
    const parent = await runRalph(
      ["run", "--agent", "demo", "--parent", "p", "--task", "US-001", "--name", "p-1", "work"],
      repo,
      env(),
    );
    assert.deepEqual(
      [parent.code, parent.stderr],
      [2, "ralph: --parent is set by a --parallel run on its child runs (ralph child-run), not by hand\n"],
    );
    const neither = await runRalph(["child-run", "p", "p-1"], repo, env());
    assert.deepEqual(
      [neither.code, neither.stderr],
      [2, "ralph: child-run: give either --task ID or --resolve (set by a --parallel run)\n"],
    );
    const noParent = await runRalph(["child-run", "p", "p-1", "--task", "US-001"], repo, env());
    assert.equal(noParent.code, 2);
    assert.match(noParent.stderr, /^ralph: --parent p: no readable /);
    const maxResolve = await runRalph(
      ["run", "--agent", "demo", "--tasks", "prd.json", "--parallel", "2", "--max-resolve", "x", "work"],
      repo,
      env(),
    );
    assert.equal(maxResolve.code, 2);
    assert.match(maxResolve.stderr, /^ralph: --max-resolve: expected a whole number/);
    assert.equal(git(repo, "branch", "--list", "ralph/*"), "");
    assert.equal(existsSync(join(repo, ".ralph")), false);
  });
});
