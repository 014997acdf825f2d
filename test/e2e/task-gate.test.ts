// A task list is a criterion: a task the agent marks done counts only once the checks pass on that tree,
// a promise with tasks open moves on to the next task, and nothing ends DONE or NO_WORK while a check fails.
// A list broken mid-run leaves the last good version in force.
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  cleanEnv,
  completionMarker,
  FAKE_AGENT,
  readEvents,
  readStatus,
  runRalph,
  tempProjects,
} from "../helpers/cli.js";
import { git, isolateGitConfig, tempRepo } from "../helpers/git-repo.js";

after(isolateGitConfig());
const project = tempProjects("ralph-task-gate-");
const runDir = (dir: string, id = "g") => join(dir, ".ralph", "runs", id);
const started = (dir: string, id = "g") => readEvents(runDir(dir, id)).filter((e) => e.type === "iteration_started");
const gitEnv = () => cleanEnv({ GIT_CONFIG_GLOBAL: process.env.GIT_CONFIG_GLOBAL ?? "", GIT_CONFIG_NOSYSTEM: "1" });

const STORIES = "# Tasks\n\n- [ ] Add a README\n- [ ] Add a licence\n- [ ] Add a changelog\n";
/** A command agent that checks the first open box of TASKS.md and claims the promise. */
const CHECK_ONE_AND_PROMISE = [
  "--",
  "sh",
  "-c",
  "cat >/dev/null; sed -i '0,/- \\[ \\]/s//- [x]/' TASKS.md; echo 'one story done'; echo '<promise>DONE</promise>'",
];

/** A prd.json written by hand: odd spacing and key order a rewrite would lose. */
const PRD = `{
  "project": "demo",
  "userStories": [
    { "id": "US-1", "title": "Add a README", "passes": false, "priority": 1 },
    {"id":"US-2","title":"Add a licence","passes":false,"priority":2}
  ]
}
`;
/** A command agent that sets every `passes` in prd.json to true (and records each prompt). */
const markAll = (prompts: string) => [
  "--",
  "sh",
  "-c",
  `cat >> '${prompts}'; printf '\\0' >> '${prompts}'; sed -i -E 's/("passes": *)false/\\1true/g' prd.json; echo marked`,
];

describe("a task list is a criterion", () => {
  test("ralph init, then --tasks TASKS.md: a promise with stories open moves on to the next story; DONE once all are checked", async () => {
    const dir = project();
    const init = await runRalph(["init"], dir);
    assert.equal(init.code, 0, init.stderr);
    writeFileSync(join(dir, "TASKS.md"), STORIES);
    const result = await runRalph(["run", "--name", "g", "--tasks", "TASKS.md", ...CHECK_ONE_AND_PROMISE], dir);
    assert.equal(result.code, 0, result.stderr);
    // Iteration 1 claimed the promise with two stories open: the run went on, one story per iteration.
    assert.equal(started(dir).length, 3);
    assert.deepEqual(
      started(dir).map((e) => String(e.task).replace(/^line \d+: /, "")),
      ["Add a README", "Add a licence", "Add a changelog"],
    );
    const log = readFileSync(join(runDir(dir), "run.log"), "utf8");
    assert.match(
      log,
      /the promise was found, but 2 task\(s\) in TASKS\.md are still open; moving on to the next: line 4: Add a licence/,
    );
    assert.equal((log.match(/LOOP_COMPLETE/g) ?? []).length, 1);
    assert.doesNotMatch(readFileSync(join(dir, "TASKS.md"), "utf8"), /- \[ \]/);
    assert.deepEqual(completionMarker(runDir(dir)), ["completion_reason=DONE", "promise=COMPLETE"]);
  });

  test("every passes set to true with --check false: the stories are reopened (only their flags change), never NO_WORK or exit 0", async () => {
    const dir = project();
    writeFileSync(join(dir, "prd.json"), PRD);
    const prompts = join(dir, "prompts.bin");
    const result = await runRalph(
      [
        "run",
        "--name",
        "g",
        "-n",
        "2",
        "--tasks",
        "prd.json",
        "--check",
        "echo 'unit tests: 2 failing'; false",
        "work",
        ...markAll(prompts),
      ],
      dir,
    );
    assert.equal(result.code, 3, result.stderr);
    assert.equal(readStatus(runDir(dir)).exit_reason, "MAX_ITERATIONS");
    // Byte for byte the file the person wrote: each reopen changed only the flags back.
    assert.equal(readFileSync(join(dir, "prd.json"), "utf8"), PRD);
    const reopened = readEvents(runDir(dir)).filter((e) => e.type === "tasks_reopened");
    assert.deepEqual(
      reopened.map((e) => [e.iteration, e.tasks]),
      [
        [1, ["US-1", "US-2"]],
        [2, ["US-1", "US-2"]],
      ],
    );
    const second = readFileSync(prompts, "utf8").split("\u0000")[1] ?? "";
    assert.match(
      second,
      /You marked these tasks done in prd\.json: US-1: Add a README; US-2: Add a licence\. A check failed on that tree, so they were reopened/,
    );
    assert.match(second, /unit tests: 2 failing/);
    assert.match(readFileSync(join(runDir(dir), "progress.txt"), "utf8"), /tasks_reopened=US-1,US-2/);
  });

  test("control: the same agent with a passing check keeps its marks and ends DONE", async () => {
    const dir = project();
    writeFileSync(join(dir, "prd.json"), PRD);
    const result = await runRalph(
      [
        "run",
        "--name",
        "g",
        "-n",
        "2",
        "--tasks",
        "prd.json",
        "--check",
        "true",
        "work",
        ...markAll(join(dir, "p.bin")),
      ],
      dir,
    );
    assert.equal(result.code, 0, result.stderr);
    assert.equal(readStatus(runDir(dir)).exit_reason, "DONE");
    assert.equal(started(dir).length, 1);
    assert.equal(
      readFileSync(join(dir, "prd.json"), "utf8"),
      PRD.replace(/"passes": ?false/g, (flag) => flag.replace("false", "true")),
    );
    assert.equal(readEvents(runDir(dir)).filter((e) => e.type === "tasks_reopened").length, 0);
  });

  test("a list already all done with a failing check: not NO_WORK; iterations without a task get the check output", async () => {
    const dir = project();
    writeFileSync(join(dir, "TASKS.md"), "- [x] one\n- [x] two\n");
    const prompts = join(dir, "prompts.bin");
    const result = await runRalph(
      [
        "run",
        "--name",
        "g",
        "-n",
        "1",
        "--tasks",
        "TASKS.md",
        "--check",
        "echo 'lint: 3 errors'; false",
        "work",
        ...markAll(prompts),
      ],
      dir,
    );
    assert.equal(result.code, 3, result.stderr);
    assert.equal(readStatus(runDir(dir)).exit_reason, "MAX_ITERATIONS");
    assert.deepEqual(
      started(dir).map((e) => e.task),
      [null],
    );
    const first = readFileSync(prompts, "utf8").split("\u0000")[0] ?? "";
    assert.match(first, /Every task in TASKS\.md is marked done, but the checks fail on this tree/);
    assert.match(first, /lint: 3 errors/);
  });

  test("control: a list already all done with a passing check ends NO_WORK without starting the agent", async () => {
    const dir = project();
    writeFileSync(join(dir, "TASKS.md"), "- [x] one\n- [x] two\n");
    const result = await runRalph(
      [
        "run",
        "--name",
        "g",
        "-n",
        "1",
        "--tasks",
        "TASKS.md",
        "--check",
        "true",
        "work",
        ...markAll(join(dir, "p.bin")),
      ],
      dir,
    );
    assert.equal(result.code, 0, result.stderr);
    assert.equal(readStatus(runDir(dir)).exit_reason, "NO_WORK");
    assert.equal(started(dir).length, 0);
    assert.deepEqual(
      readEvents(runDir(dir))
        .filter((e) => e.type === "criteria_checked")
        .map((e) => e.passed),
      [true],
    );
  });

  test("--parallel 2 --check false: no child marks its task, the parent does not exit 0, the person's list stays open", async () => {
    const repo = tempRepo();
    writeFileSync(join(repo, "prd.json"), PRD);
    git(repo, "add", "prd.json");
    git(repo, "commit", "-q", "-m", "stories");
    const result = await runRalph(
      [
        "run",
        "--name",
        "p",
        "-n",
        "1",
        "--parallel",
        "2",
        "--tasks",
        "prd.json",
        "--check",
        "false",
        "work",
        ...markAll(join(repo, "..", "p.bin")),
      ],
      repo,
      gitEnv(),
    );
    assert.notEqual(result.code, 0, result.stdout);
    assert.equal(readStatus(runDir(repo, "p")).exit_reason, "FAILED");
    assert.equal(readFileSync(join(repo, "prd.json"), "utf8"), PRD);
    const children = readEvents(runDir(repo, "p")).filter((e) => e.type === "child_ended");
    assert.equal(children.length, 2);
    for (const child of children) assert.notEqual(child.reason, "DONE");
  });
});

test("a task list broken mid-run is tolerated like a broken state.md: logged once, the last good version in force", async () => {
  const dir = project();
  writeFileSync(join(dir, "prd.json"), JSON.stringify({ userStories: [{ id: "US-1", title: "One", passes: false }] }));
  const breakIt = `echo '{broken' > prd.json; exec "$0" "$@"`;
  const result = await runRalph(
    [
      "run",
      "--name",
      "t",
      "-n",
      "3",
      "--tasks",
      "prd.json",
      "go",
      "--",
      "sh",
      "-c",
      breakIt,
      process.execPath,
      FAKE_AGENT,
    ],
    dir,
  );
  assert.equal(result.code, 3, result.stderr);
  const runDir = join(dir, ".ralph", "runs", "t");
  assert.equal(readStatus(runDir).iteration, 3);
  const log = readFileSync(join(runDir, "run.log"), "utf8");
  assert.equal(
    log.match(/ignoring task list .*prd\.json until it is fixed \(the last good version stays in force\)/g)?.length,
    1,
    log,
  );
});
