import { after, test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { processAlive } from "../helpers/cli.js";
import { waitFor } from "../helpers/wait.js";
import {
  checkCriteria,
  failingContext,
  parseCriteria,
  type Criterion,
  type CriterionVerdict,
} from "../../src/judge/criteria.js";

const dir = mkdtempSync(join(tmpdir(), "ralph-criteria-"));
const started: number[] = [];
after(() => {
  for (const pid of started) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
  rmSync(dir, { recursive: true, force: true });
});

async function one(
  criterion: Criterion,
  extra: Partial<Parameters<typeof checkCriteria>[1]> = {},
): Promise<CriterionVerdict> {
  const [verdict] = await checkCriteria([criterion], { cwd: dir, env: process.env, ...extra });
  assert.ok(verdict);
  return verdict;
}

test("command: exit 0 passes, any other exit fails with the code", async () => {
  const pass = await one({ type: "command", check: "true" });
  assert.deepEqual([pass.passed, pass.exitCode, pass.detail], [true, 0, "exit 0"]);
  const fail = await one({ type: "command", check: "echo nope; exit 3" });
  assert.deepEqual([fail.passed, fail.exitCode, fail.detail], [false, 3, "exit 3"]);
  assert.equal(fail.outputTail, "nope\n");
  assert.equal(fail.type, "command");
  assert.equal(fail.check, "echo nope; exit 3");
  assert.ok(fail.durationMs >= 0 && fail.durationMs < 5000);
});

test("command: runs in the project directory with the given environment", async () => {
  writeFileSync(join(dir, "marker.txt"), "x");
  const verdict = await one(
    { type: "command", check: 'test -f marker.txt && test "$RALPH_TEST_VALUE" = "a b"' },
    { env: { ...process.env, RALPH_TEST_VALUE: "a b" } },
  );
  assert.equal(verdict.passed, true, verdict.detail);
  assert.equal((await one({ type: "command", check: 'test "$RALPH_TEST_VALUE" = "a b"' })).passed, false);
});

test("command: stdout and stderr are captured together, and only the last bytes are kept", async () => {
  const both = await one({ type: "command", check: "echo out; echo err >&2; exit 1" });
  assert.match(both.outputTail, /out\n/);
  assert.match(both.outputTail, /err\n/);
  const big = await one(
    { type: "command", check: "head -c 300000 /dev/zero | tr '\\0' a; echo; echo 'é-THE-END'" },
    { outputCapBytes: 1024 },
  );
  assert.equal(big.passed, true);
  assert.ok(Buffer.byteLength(big.outputTail) <= 1024, `kept ${Buffer.byteLength(big.outputTail)} bytes`);
  assert.ok(Buffer.byteLength(big.outputTail) >= 1000);
  assert.ok(big.outputTail.endsWith("é-THE-END\n"));
  const defaultCap = await one({ type: "command", check: "head -c 200000 /dev/zero | tr '\\0' b" });
  assert.equal(Buffer.byteLength(defaultCap.outputTail), 64 * 1024);
});

test("command: a hanging check is killed at its timeout, with its whole process group, and fails", async () => {
  const pidFile = join(dir, "sleep.pid");
  const startedAt = Date.now();
  const verdict = await one(
    { type: "command", check: `sleep 30 & echo $! > '${pidFile}'; echo waiting; wait` },
    { timeoutMs: 300 },
  );
  const elapsed = Date.now() - startedAt;
  const sleepPid = Number(readFileSync(pidFile, "utf8"));
  started.push(sleepPid);
  assert.equal(verdict.passed, false);
  assert.equal(verdict.timedOut, true);
  assert.match(verdict.detail, /timed out after 300ms/);
  assert.match(verdict.outputTail, /waiting/);
  assert.ok(elapsed < 3000, `took ${elapsed} ms`);
  await waitFor(() => !processAlive(sleepPid), `the sleep the check started (${sleepPid}) to end`, 2000);
});

test("command: the default timeout is 10 minutes", async () => {
  const verdict = await one({ type: "command", check: "exit 0" });
  assert.equal(verdict.timedOut, undefined);
  const { DEFAULT_CHECK_TIMEOUT_MS } = await import("../../src/judge/criteria.js");
  assert.equal(DEFAULT_CHECK_TIMEOUT_MS, 600_000);
  assert.equal(
    (await one({ type: "command", check: "sleep 0.05" }, { timeoutMs: 0 })).passed,
    true,
    "0 means no limit",
  );
});

test("command: a missing project directory fails the check instead of throwing", async () => {
  const verdict = await one({ type: "command", check: "true" }, { cwd: join(dir, "no-such-dir") });
  assert.equal(verdict.passed, false);
  assert.match(verdict.detail, /could not start: .*no-such-dir does not exist/);
});

test("command: processes a passing check leaves behind in its group are ended", async () => {
  const pidFile = join(dir, "left.pid");
  const verdict = await one({ type: "command", check: `sleep 30 >/dev/null 2>&1 & echo $! > '${pidFile}'` });
  const pid = Number(readFileSync(pidFile, "utf8"));
  started.push(pid);
  assert.equal(verdict.passed, true);
  await waitFor(() => !processAlive(pid), `process ${pid} to end`, 2000);
});

test("command: a process that left the session and holds the output pipe does not hang the check, and is ended with it", async () => {
  const pidFile = join(dir, "escaped.pid");
  const startedAt = Date.now();
  const verdict = await one(
    {
      type: "command",
      check: `setsid sh -c 'echo $$ > "${pidFile}"; exec sleep 30' & until [ -s "${pidFile}" ]; do sleep 0.01; done; echo checked`,
    },
    { timeoutMs: 5000 },
  );
  const pid = Number(readFileSync(pidFile, "utf8"));
  started.push(pid);
  assert.equal(verdict.passed, true);
  assert.match(verdict.outputTail, /checked/);
  assert.ok(Date.now() - startedAt < 2000, `took ${Date.now() - startedAt} ms`);
  // Supervised like an agent (tree mode here: it still carries the check's marker), so it does not outlive the check.
  assert.equal(processAlive(pid), false, "the check's detached process outlived it");
});

test("command: aborting the signal kills the running check and skips the rest", async () => {
  const controller = new AbortController();
  const startedAt = Date.now();
  const pending = checkCriteria(
    [
      { type: "command", check: "sleep 30" },
      { type: "command", check: "true" },
    ],
    { cwd: dir, env: process.env, signal: controller.signal },
  );
  controller.abort();
  const [first, second] = await pending;
  assert.ok(Date.now() - startedAt < 3000);
  assert.equal(first?.passed, false);
  assert.match(first?.detail ?? "", /stopped/);
  assert.deepEqual([second?.passed, second?.skipped], [false, true]);
});

test("an unknown type is a label for a command check", async () => {
  const fail = await one({ type: "all_pages_pass", check: "echo checking pages; test -f pages.ok" });
  assert.deepEqual([fail.type, fail.passed, fail.exitCode], ["all_pages_pass", false, 1]);
  assert.match(fail.outputTail, /checking pages/);
  writeFileSync(join(dir, "pages.ok"), "");
  assert.equal((await one({ type: "all_pages_pass", check: "echo checking pages; test -f pages.ok" })).passed, true);
});

test("file_exists: a path relative to the project directory", async () => {
  mkdirSync(join(dir, "out"), { recursive: true });
  assert.equal((await one({ type: "file_exists", check: "out/report.html" })).passed, false);
  writeFileSync(join(dir, "out", "report.html"), "<html>");
  const verdict = await one({ type: "file_exists", check: "out/report.html" });
  assert.deepEqual([verdict.passed, verdict.detail], [true, "out/report.html exists"]);
  assert.equal((await one({ type: "file_exists", check: "" })).passed, false);
});

test("no_files: passes only once the last matching file is removed", async () => {
  const issues = join(dir, "docs", "issues");
  mkdirSync(issues, { recursive: true });
  for (const name of ["a.md", "b.md", "c.md", ".gitkeep", "notes.txt"]) writeFileSync(join(issues, name), name);
  const criterion = { type: "no_files", check: "docs/issues/*.md" };
  const first = await one(criterion);
  assert.equal(first.passed, false);
  assert.match(
    first.detail,
    /^3 files match docs\/issues\/\*\.md: docs\/issues\/a\.md, docs\/issues\/b\.md, docs\/issues\/c\.md$/,
  );
  assert.equal(first.outputTail, "docs/issues/a.md\ndocs/issues/b.md\ndocs/issues/c.md");
  rmSync(join(issues, "a.md"));
  rmSync(join(issues, "b.md"));
  const last = await one(criterion);
  assert.deepEqual([last.passed, last.detail], [false, "1 file matches docs/issues/*.md: docs/issues/c.md"]);
  rmSync(join(issues, "c.md"));
  const done = await one(criterion);
  assert.deepEqual([done.passed, done.detail], [true, "nothing matches docs/issues/*.md"]);
});

test("tasks_done: the task list is complete", async () => {
  const prd = join(dir, "prd.json");
  const stories = (passes: boolean): string =>
    JSON.stringify({
      userStories: [
        { id: "US-1", title: "a", priority: 1, passes: true },
        { id: "US-2", title: "b", priority: 2, passes },
      ],
    });
  writeFileSync(prd, stories(false));
  const open = await one({ type: "tasks_done", check: "" }, { tasksFile: "prd.json" });
  assert.equal(open.passed, false);
  assert.match(open.detail, /1 of 2 tasks in prd\.json left; next: US-2: b/);
  writeFileSync(prd, stories(true));
  assert.equal((await one({ type: "tasks_done", check: "" }, { tasksFile: prd })).passed, true);
  assert.equal((await one({ type: "tasks_done", check: "prd.json" })).passed, true, "the check may name the file");
  writeFileSync(join(dir, "broken.json"), "{");
  const broken = await one({ type: "tasks_done", check: "broken.json" });
  assert.equal(broken.passed, false);
  assert.match(broken.detail, /broken\.json is not valid JSON/);
  assert.match((await one({ type: "tasks_done", check: "" })).detail, /no task list/);
});

test("criteria run in order, and stopAtFirstFailure skips the rest", async () => {
  const log = join(dir, "order.log");
  const criteria = [
    { type: "command", check: `echo 1 >> '${log}'` },
    { type: "command", check: `echo 2 >> '${log}'; exit 1` },
    { type: "command", check: `echo 3 >> '${log}'` },
  ];
  const all = await checkCriteria(criteria, { cwd: dir, env: process.env });
  assert.deepEqual(
    all.map((v) => v.passed),
    [true, false, true],
  );
  assert.equal(readFileSync(log, "utf8"), "1\n2\n3\n");
  rmSync(log);
  const stopped = await checkCriteria(criteria, { cwd: dir, env: process.env, stopAtFirstFailure: true });
  assert.deepEqual(
    stopped.map((v) => [v.passed, v.skipped === true]),
    [
      [true, false],
      [false, false],
      [false, true],
    ],
  );
  assert.equal(readFileSync(log, "utf8"), "1\n2\n");
});

test("failingContext names each failed check with the tail of its output", async () => {
  const verdicts = await checkCriteria(
    [
      { type: "command", check: "true" },
      { type: "command", check: "echo 'FAIL src/a.test.ts: expected 2, got 3'; exit 1" },
      { type: "no_files", check: "docs/issues/*.md" },
      { type: "command", check: "seq 1 3000; printf '```\\n'; echo LAST-LINE; exit 2" },
    ],
    { cwd: dir, env: process.env },
  );
  const text = failingContext(verdicts);
  assert.match(text, /`echo 'FAIL src\/a.test.ts: expected 2, got 3'; exit 1`: exit 1/);
  assert.match(text, /FAIL src\/a\.test\.ts: expected 2, got 3/);
  assert.match(text, /LAST-LINE\n````/, "the tail keeps the end and is fenced past the backticks in it");
  assert.ok(!text.includes("`true`"), "passing checks are not mentioned");
  assert.ok(text.length <= 4000);
  const small = failingContext(verdicts, 600);
  assert.ok(small.length <= 600);
  assert.match(small, /exit 2/);
  assert.equal(failingContext(verdicts.filter((v) => v.passed)), "");
  assert.equal(failingContext([]), "");
});

test("parseCriteria validates {type, check} lists", () => {
  assert.deepEqual(
    parseCriteria(
      [
        { type: "command", check: "npm test" },
        { type: "all_pages_pass", check: "npx verify-pages" },
        "make lint",
        { type: "tasks_done" },
        { check: "true" },
      ],
      "state.md",
    ),
    {
      ok: true,
      criteria: [
        { type: "command", check: "npm test" },
        { type: "all_pages_pass", check: "npx verify-pages" },
        { type: "command", check: "make lint" },
        { type: "tasks_done", check: "" },
        { type: "command", check: "true" },
      ],
    },
  );
  assert.deepEqual(parseCriteria(undefined, "state.md"), { ok: true, criteria: [] });
  const bad: Array<[unknown, RegExp]> = [
    ["npm test", /must be a list/],
    [[{ type: "command" }], /criterion 1 \(command\) needs a "check" string/],
    [[{ type: "no_files", check: "" }], /needs a "check"/],
    [[{ type: 3, check: "x" }], /needs a "type" string/],
    [[42], /must be \{type, check\}/],
    // A misspelt built-in type is refused, not run as a shell command (`file_exist` once ran `dist/app.js`).
    [
      [{ type: "file_exist", check: "dist/app.js" }],
      /criterion 1: type "file_exist" is not a criterion type \(did you mean file_exists\? built in: /,
    ],
    [[{ type: "task_done" }], /did you mean tasks_done\?/],
    [[{ type: "no_file", check: "*.tmp" }], /did you mean no_files\?/],
    [
      [{ type: "file_missing", check: "x" }],
      /type "file_missing" is not a criterion type \(built in: command, file_exists/,
    ],
  ];
  for (const [value, pattern] of bad) {
    const result = parseCriteria(value, "ralph.yaml");
    assert.equal(result.ok, false, JSON.stringify(value));
    if (!result.ok) {
      assert.match(result.message, /^ralph\.yaml: /);
      assert.match(result.message, pattern);
    }
  }
});
