// What ralph answer, pause and status tell a person about a run that moves faster than they type.
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  cleanEnv,
  fakeAgent,
  finishWithin,
  readEvents,
  readStatus,
  runRalph,
  startRalph,
  tempProjects,
  trackedStarts,
} from "../helpers/cli.js";
import { waitFor } from "../helpers/wait.js";
import { git, isolateGitConfig, storiesRepo, tempRepo } from "../helpers/git-repo.js";

after(isolateGitConfig());
const project = tempProjects("ralph-answers-");
const start = trackedStarts();
const runDir = (dir: string, id: string) => join(dir, ".ralph", "runs", id);

/** A run whose agent asks in iteration 1 and claims FIN from iteration 2; resolves once it waits for the answer. */
async function askingRun(dir: string, id: string) {
  const started = start(dir, [
    "run",
    "--name",
    id,
    "-n",
    "5",
    "--completion-promise",
    "FIN",
    "build it",
    ...fakeAgent("--ask", "Which database?", "--ask-in", "1", "--promise", "FIN", "--promise-from", "2"),
  ]);
  await waitFor(
    () =>
      existsSync(join(runDir(dir, id), "status.json")) &&
      readStatus(runDir(dir, id)).state === "needs_human" &&
      readEvents(runDir(dir, id)).some((event) => event.type === "needs_human"),
    `run ${id} to wait for an answer`,
  );
  return started;
}

/** Sends `name` to `pid` if it is still there. */
function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // Gone already.
  }
}

test("ralph answer racing a run that took the answer and finished says it was taken, not to continue", async () => {
  const dir = project();
  const run = await askingRun(dir, "fast");
  const runner = Number(readStatus(runDir(dir, "fast")).pid);
  // The runner is held still while the answer is written, and the answer command while the run finishes:
  // the answer command's next look finds the run taken and ended, as with a very fast run.
  process.kill(runner, "SIGSTOP");
  const answer = startRalph(["answer", "Postgres"], dir);
  try {
    await waitFor(() => existsSync(join(runDir(dir, "fast"), "ANSWER")), "the ANSWER file");
    process.kill(answer.child.pid ?? 0, "SIGSTOP");
    process.kill(runner, "SIGCONT");
    const ended = await finishWithin(run, 20_000);
    assert.equal(ended.code, 0, ended.stderr);
  } finally {
    signal(runner, "SIGCONT");
    signal(answer.child.pid ?? 0, "SIGCONT");
  }
  const said = await finishWithin(answer, 20_000);
  assert.equal(said.code, 0, said.stderr);
  assert.match(said.stdout, /^run fast took the answer and has since ended \(DONE\); see ralph status fast$/m);
  assert.doesNotMatch(said.stdout, /ralph continue/);
});

test("a stopped run's open question does not make a bare ralph answer ambiguous: the live waiting run is meant", async () => {
  const dir = project();
  const stopped = await askingRun(dir, "a");
  assert.equal((await runRalph(["stop", "a"], dir)).code, 0);
  assert.equal((await finishWithin(stopped, 20_000)).code, 0);
  const live = await askingRun(dir, "b");
  const answered = await runRalph(["answer", "SQLite"], dir);
  assert.equal(answered.code, 0, answered.stderr);
  assert.match(answered.stdout, /run b took the answer/);
  assert.equal((await finishWithin(live, 20_000)).code, 0);
  // The stopped run keeps its question for ralph continue.
  assert.equal(readStatus(runDir(dir, "a")).question, "Which database?");
});

test("after ralph pause, status says the run is pausing at the end of its iteration; the runner says paused once", async () => {
  const dir = project();
  const gate = join(dir, "gate");
  const run = start(dir, ["run", "--name", "p", "-n", "2", "go", ...fakeAgent("--wait-for", gate)]);
  await waitFor(() => existsSync(`${gate}.started`), "the agent to start");
  assert.equal((await runRalph(["pause", "p"], dir)).code, 0);
  const status = await runRalph(["status", "p"], dir);
  assert.match(status.stdout, /^state {6}pausing at the end of iteration 1 \(ralph resume p cancels it\)$/m);
  writeFileSync(gate, "go");
  await waitFor(() => readStatus(runDir(dir, "p")).state === "paused", "the run to pause");
  assert.equal((await runRalph(["resume", "p"], dir)).code, 0);
  const result = await finishWithin(run, 20_000);
  assert.equal(result.code, 3, result.stderr);
  assert.equal(result.stdout.split("\n").filter((line) => /^paused\b/.test(line)).length, 1, result.stdout);
});

test("after ralph stop, status says the run is stopping at the end of its iteration, not running", async () => {
  const dir = project();
  const gate = join(dir, "gate");
  const run = start(dir, ["run", "--name", "s", "-n", "3", "go", ...fakeAgent("--wait-for", gate)]);
  await waitFor(() => existsSync(`${gate}.started`), "the agent to start");
  const before = await runRalph(["status", "s"], dir);
  assert.match(before.stdout, /^state {6}running$/m, "control: before the stop, the run reads running");
  assert.equal((await runRalph(["stop", "s"], dir)).code, 0);
  const status = await runRalph(["status", "s"], dir);
  assert.match(status.stdout, /^state {6}stopping at the end of iteration 1 \(ralph stop --now ends it at once\)$/m);
  assert.equal(
    JSON.parse((await runRalph(["status", "s", "--json"], dir)).stdout).state,
    "running",
    "the JSON state is unchanged",
  );
  writeFileSync(gate, "go");
  const result = await finishWithin(run, 20_000);
  assert.match(result.stdout + result.stderr, /STOP/);
});

test("a STOP that is a dangling link is a stop request for status as for the runner", async () => {
  const dir = project();
  const gate = join(dir, "gate");
  const run = start(dir, ["run", "--name", "l", "-n", "3", "go", ...fakeAgent("--wait-for", gate)]);
  await waitFor(() => existsSync(`${gate}.started`), "the agent to start");
  symlinkSync(join(dir, "nowhere"), join(runDir(dir, "l"), "STOP"));
  const status = await runRalph(["status", "l"], dir);
  assert.match(status.stdout, /^state {6}stopping at the end of iteration 1 \(ralph stop --now ends it at once\)$/m);
  writeFileSync(gate, "go");
  const result = await finishWithin(run, 20_000);
  assert.equal(readStatus(runDir(dir, "l")).exit_reason, "STOPPED", result.stdout + result.stderr);
});

test("a --parallel parent told to stop says what that means for its children, not for an iteration of its own", async () => {
  const repo = storiesRepo();
  const gate = join(repo, "..", `${repo.split("/").pop()}-gate`);
  const env = cleanEnv({ GIT_CONFIG_GLOBAL: process.env.GIT_CONFIG_GLOBAL ?? "", GIT_CONFIG_NOSYSTEM: "1" });
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
      "pp",
      "work",
      ...fakeAgent("--wait-for", gate),
    ],
    repo,
    env,
  );
  try {
    await waitFor(() => existsSync(`${gate}.started`), "the first child's agent to start");
    assert.equal((await runRalph(["stop", "pp"], repo, env)).code, 0);
    const stopping = await runRalph(["status", "pp"], repo, env);
    assert.match(
      stopping.stdout,
      /^state {6}stopping: no new children; each child stops at its next boundary \(ralph stop --now ends every child's agent at once\)$/m,
    );
    assert.doesNotMatch(stopping.stdout, /end of iteration/);
    writeFileSync(gate, "go");
    const result = await finishWithin(parent, 30_000);
    assert.equal(readStatus(runDir(repo, "pp")).exit_reason, "STOPPED", result.stdout + result.stderr);
  } finally {
    if (parent.child.exitCode === null && parent.child.signalCode === null) parent.child.kill("SIGKILL");
  }
});

test("a --parallel parent counts child runs, not iterations of a cap it does not have", async () => {
  const repo = tempRepo();
  writeFileSync(join(repo, "TASKS.md"), "- [ ] one\n- [ ] two\n- [ ] three\n");
  git(repo, "add", "TASKS.md");
  git(repo, "commit", "-q", "-m", "tasks");
  const env = cleanEnv({
    GIT_CONFIG_GLOBAL: process.env.GIT_CONFIG_GLOBAL ?? "",
    GIT_CONFIG_NOSYSTEM: "1",
    RALPH_DEMO_DELAY_MS: "0",
  });
  const ran = await runRalph(
    ["run", "--agent", "demo", "--tasks", "TASKS.md", "--parallel", "2", "-n", "2", "--name", "par", "go"],
    repo,
    env,
  );
  // The parent names any child that did not end DONE on stdout: a failure shows which and why.
  assert.equal(ran.code, 0, ran.stdout + ran.stderr);
  const list = (await runRalph(["list"], repo, env)).stdout;
  assert.match(list, /^par {2,}DONE {2,}3 runs {2,}/m);
  assert.match(list, /^ {2}par-1 {2,}DONE {2,}1\/2 /m);
  assert.doesNotMatch(list, /∞/);
  const status = (await runRalph(["status", "par"], repo, env)).stdout;
  assert.match(status, /^children {3}3 child runs started/m);
  assert.doesNotMatch(status, /∞/);
});

test("status shows peak memory in MiB, as the live line does", async (t) => {
  const dir = project();
  const ran = await runRalph(
    ["run", "-n", "1", "--name", "s", "go", ...fakeAgent()],
    dir,
    cleanEnv({ RALPH_SUPERVISION: "cgroup" }),
  );
  if (ran.code !== 3) return t.skip(`no cgroup supervision here: ${ran.stderr.trim()}`);
  const status = await runRalph(["status", "s"], dir);
  assert.match(status.stdout, /peak memory \d+\.\d MiB/);
  assert.doesNotMatch(status.stdout, /bytes/);
});
