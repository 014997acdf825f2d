// `ralph continue` checks the person's scripts (a reviewer's, a notification's) against the digests the runner's
// record took when the run was created, never against the files as an agent left them: a script the agent
// rewrote during the first part of a run is still not run after it.
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { canonical, entryFile, readLedgerEntry } from "../../src/control/ledger-entry.js";
import { cleanEnv, readEvents, readStatus, runRalph } from "../helpers/cli.js";
import { git, isolateGitConfig, tempRepo } from "../helpers/git-repo.js";
import { REVIEWER_REWRITING_AGENT, scriptReviewerRepo } from "../fixtures/script-reviewer.js";

after(isolateGitConfig());
const outsideDir = mkdtempSync(join(tmpdir(), "ralph-pins-outside-"));
after(() => rmSync(outsideDir, { recursive: true, force: true }));
const runDir = (repo: string): string => join(repo, ".ralph", "runs", "r");
const gitEnv = () => cleanEnv({ GIT_CONFIG_GLOBAL: process.env.GIT_CONFIG_GLOBAL ?? "", GIT_CONFIG_NOSYSTEM: "1" });

/** Makes the run's record as it was before it kept pins (the control: the scripts are pinned again at continue). */
function forgetPins(repo: string): void {
  const entry = readLedgerEntry(runDir(repo));
  assert.ok(entry?.pins, "the run's record has its pins");
  writeFileSync(entryFile(canonical(runDir(repo)), process.env), `${JSON.stringify({ ...entry, pins: undefined })}\n`);
}

/** A run `r` of one iteration whose agent rewrote the person's reviewer to approve, then `continue r -n 2`. */
async function reviewerRewrittenThenContinued(forget: boolean) {
  const repo = scriptReviewerRepo();
  const first = await runRalph(
    ["run", "--name", "r", "-n", "1", "--completion-promise", "DONE", "work", ...REVIEWER_REWRITING_AGENT],
    repo,
    gitEnv(),
  );
  assert.equal(first.code, 3, first.stdout + first.stderr);
  if (forget) forgetPins(repo);
  const continued = await runRalph(["continue", "r", "-n", "2"], repo, gitEnv());
  return { repo, continued, verdicts: readEvents(runDir(repo)).filter((event) => event.type === "review_verdict") };
}

test("continued, the reviewer script the agent rewrote is still not run: no verdict, not DONE (pinned again, it approves)", async () => {
  const { repo, continued, verdicts } = await reviewerRewrittenThenContinued(false);
  assert.equal(continued.code, 3, continued.stdout + continued.stderr);
  assert.equal(readStatus(runDir(repo)).exit_reason, "MAX_ITERATIONS");
  assert.deepEqual(
    verdicts.map((event) => event.verdict),
    ["none", "none"],
  );
  assert.match(
    String(verdicts[1]?.reason),
    /^not run: the reviewer's script .*\/review\.sh changed since the run started; ralph runs only the script as it was then$/,
  );
  // Control: with a record that kept no pins, continue pins the rewrite, which approves: DONE.
  const control = await reviewerRewrittenThenContinued(true);
  assert.equal(control.continued.code, 0, control.continued.stdout + control.continued.stderr);
  assert.deepEqual(
    control.verdicts.map((event) => event.verdict),
    ["none", "approve"],
  );
});

/** A run `r` of one iteration with `--notify ./notify.sh`, whose agent rewrote notify.sh to write `mark`; then `continue r`. */
async function notifierRewrittenThenContinued(forget: boolean, mark: string) {
  const repo = tempRepo();
  writeFileSync(join(repo, "notify.sh"), "#!/bin/sh\ncat > /dev/null\n", { mode: 0o755 });
  git(repo, "add", "-A");
  git(repo, "commit", "-q", "-m", "the person's notifier");
  const agent = [
    "--",
    "sh",
    "-c",
    `cat > /dev/null; printf '#!/bin/sh\\necho ran >> "${mark}"\\n' > notify.sh; echo working`,
  ];
  const first = await runRalph(
    ["run", "--name", "r", "-n", "1", "--notify", "./notify.sh", "work", ...agent],
    repo,
    gitEnv(),
  );
  assert.equal(first.code, 3, first.stdout + first.stderr);
  assert.equal(existsSync(mark), false, "within the run, the rewritten notifier was not run");
  if (forget) forgetPins(repo);
  const continued = await runRalph(["continue", "r", "-n", "2"], repo, gitEnv());
  return { repo, continued };
}

test("continued, the notification script the agent rewrote is still not run (pinned again, ralph runs the agent's script)", async () => {
  const mark = join(outsideDir, "pinned");
  const { repo, continued } = await notifierRewrittenThenContinued(false, mark);
  assert.equal(continued.code, 3, continued.stdout + continued.stderr);
  assert.equal(existsSync(mark), false, "the rewritten notifier did not run at continue");
  const failed = readEvents(runDir(repo)).filter((event) => event.type === "notification_failed");
  assert.equal(failed.length, 2);
  assert.match(
    String(failed[1]?.error),
    /^not run: .*\/notify\.sh changed since the run started; ralph runs only the script as it was then$/,
  );
  // Control: with a record that kept no pins, continue pins the rewrite and runs it, outside the work tree.
  const control = join(outsideDir, "repinned");
  await notifierRewrittenThenContinued(true, control);
  assert.equal(readFileSync(control, "utf8"), "ran\n");
});

/**
 * A `--task-index 0` run that goes on from task branch ralph/US-1, where an earlier agent committed a reviewer
 * that approves; the person's own reviewer (in HEAD) is `personReviewer`. The agent marks the task done and claims it.
 */
async function taskBranchWithAgentReviewer(personReviewer: string) {
  const repo = tempRepo();
  const approves = "cat > /dev/null\necho '<verdict>approve</verdict>'\n";
  writeFileSync(join(repo, "review.sh"), personReviewer);
  writeFileSync(
    join(repo, "ralph.yaml"),
    `completion_criteria:\n  - type: review\n    agent: command\n    check: the person's reviewer\n    command: ["sh", "review.sh"]\n`,
  );
  writeFileSync(
    join(repo, "prd.json"),
    '{"userStories": [{"id": "US-1", "title": "one", "passes": false, "priority": 1}]}\n',
  );
  git(repo, "add", "-A");
  git(repo, "commit", "-q", "-m", "the person's reviewer and task list");
  git(repo, "branch", "ralph/US-1");
  git(repo, "checkout", "-q", "ralph/US-1");
  writeFileSync(join(repo, "review.sh"), approves);
  git(repo, "commit", "-q", "--allow-empty", "-am", "an earlier agent's work on US-1");
  git(repo, "checkout", "-q", "main");
  const agent = [
    "--",
    "sh",
    "-c",
    `cat > /dev/null; sed -i 's/"passes": false/"passes": true/' prd.json; echo done >> work.txt; echo '<promise>DONE</promise>'`,
  ];
  const result = await runRalph(
    [
      "run",
      "--worktree",
      "--tasks",
      "prd.json",
      "--task-index",
      "0",
      "-n",
      "1",
      "--completion-promise",
      "DONE",
      "work",
      ...agent,
    ],
    repo,
    gitEnv(),
  );
  const dir = join(repo, ".ralph", "runs", "US-1");
  return { result, verdicts: readEvents(dir).filter((event) => event.type === "review_verdict"), approves };
}

test("--task-index going on from a task branch pins the person's reviewer, not the one an earlier agent committed there", async () => {
  const { result, verdicts, approves } = await taskBranchWithAgentReviewer(
    "cat > /dev/null\necho 'FINDING: not yet.'\necho '<verdict>changes</verdict>'\n",
  );
  assert.equal(result.code, 3, result.stdout + result.stderr);
  assert.deepEqual(
    verdicts.map((event) => event.verdict),
    ["none"],
  );
  assert.match(
    String(verdicts[0]?.reason),
    /^not run: the reviewer's script .*\/review\.sh changed since the run started; ralph runs only the script as it was then$/,
  );
  // Control: when the person's reviewer is the one on the branch, it is run there, and approves.
  const control = await taskBranchWithAgentReviewer(approves);
  assert.equal(control.result.code, 0, control.result.stdout + control.result.stderr);
  assert.deepEqual(
    control.verdicts.map((event) => event.verdict),
    ["approve"],
  );
});
