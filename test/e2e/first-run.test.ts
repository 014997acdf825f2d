// A newcomer's first runs: what ralph says once, what it keeps out of git, what it refuses to throw away.
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cleanEnv, fakeAgent, runRalph, tempProjects } from "../helpers/cli.js";
import { git, isolateGitConfig, tempRepo } from "../helpers/git-repo.js";

after(isolateGitConfig());
const project = tempProjects("ralph-first-run-");
const gitEnv = () => cleanEnv({ GIT_CONFIG_GLOBAL: process.env.GIT_CONFIG_GLOBAL ?? "", GIT_CONFIG_NOSYSTEM: "1" });
const count = (text: string, pattern: RegExp) => text.split("\n").filter((line) => pattern.test(line)).length;

test("ralph's own options after -- get a warning; the agent still receives them", async () => {
  const dir = project();
  const result = await runRalph(["run", "-n", "1", "go", "--", "sh", "-c", "echo ok", "sh", "--completion-promise", "DONE", "--max-cost=2", "--model", "x"], dir);
  assert.equal(result.code, 3, result.stderr);
  assert.match(result.stderr, /^ralph: warning: --completion-promise, --max-cost after -- go to the agent command, not to ralph; put ralph's options before --$/m);
  assert.doesNotMatch(result.stderr, /--model/, "an option agents have too is not flagged");
  // Known-false control: nothing misplaced, no warning.
  const clean = await runRalph(["run", "-n", "1", "--completion-promise", "DONE", "go", ...fakeAgent()], dir);
  assert.doesNotMatch(clean.stderr, /warning/);
});

test("a final message with <promise>…</promise> in a run with no promise is said once, not every iteration", async () => {
  const dir = project();
  const result = await runRalph(["run", "-n", "3", "go", "--", "sh", "-c", "echo 'all good <promise>DONE</promise>'"], dir);
  assert.equal(result.code, 3, result.stderr);
  assert.equal(count(result.stdout, /holds <promise>DONE<\/promise>, but this run has no completion promise/), 1, result.stdout);
  // Known-false control: with the promise set, the same message ends the run and nothing is explained.
  const set = await runRalph(["run", "-n", "3", "--completion-promise", "DONE", "go", "--", "sh", "-c", "echo 'all good <promise>DONE</promise>'"], dir);
  assert.equal(set.code, 0, set.stderr);
  assert.doesNotMatch(set.stdout, /no completion promise, so it ends nothing/);
});

test("outside git, 'stall detection needs git' is said once per run, and not twice in one line", async () => {
  const dir = project();
  const result = await runRalph(["run", "-n", "3", "--stall-limit", "2", "go", ...fakeAgent()], dir);
  assert.equal(result.code, 3, result.stderr);
  const lines = result.stdout.split("\n").filter((line) => /stall detection/.test(line));
  assert.equal(lines.length, 1, result.stdout);
  assert.equal(lines[0]?.split("stall detection").length, 2, lines[0]);
});

test("a first ralph run in a repository without ralph init keeps .ralph/ out of git add, and says so once", async () => {
  const repo = tempRepo({ ignoreRalph: false });
  const first = await runRalph(["run", "-n", "1", "go", ...fakeAgent()], repo, gitEnv());
  assert.equal(first.code, 3, first.stderr);
  assert.match(first.stdout, /git now ignores \.ralph\/ here \(added to \.git\/info\/exclude/);
  assert.equal(git(repo, "status", "--porcelain"), "", "no ?? .ralph/");
  assert.match(readFileSync(join(repo, ".git", "info", "exclude"), "utf8"), /^\.ralph\/$/m);
  const second = await runRalph(["run", "-n", "1", "go", ...fakeAgent()], repo, gitEnv());
  assert.doesNotMatch(second.stdout, /git now ignores/);
  // Known-false control: a repository whose .gitignore already has it is left alone.
  const ignoring = tempRepo();
  const before = readFileSync(join(ignoring, ".git", "info", "exclude"), "utf8");
  const third = await runRalph(["run", "-n", "1", "go", ...fakeAgent()], ignoring, gitEnv());
  assert.doesNotMatch(third.stdout, /git now ignores/);
  assert.equal(readFileSync(join(ignoring, ".git", "info", "exclude"), "utf8"), before);
});

test("ralph clean without --force refuses a worktree holding files under a .ralph/ directory; --force removes it", async () => {
  const repo = tempRepo();
  const ran = await runRalph(["run", "-n", "1", "--name", "w", "--worktree", "go", "--", "sh", "-c", "mkdir -p docs/.ralph && echo mine > docs/.ralph/notes.md"], repo, gitEnv());
  assert.equal(ran.code, 3, ran.stderr);
  const refused = await runRalph(["clean", "w"], repo, gitEnv());
  assert.equal(refused.code, 2, refused.stdout);
  assert.match(refused.stderr, /has 1 uncommitted change\(s\)[\s\S]*docs\/\.ralph\//);
  assert.equal(readFileSync(join(repo, ".ralph", "worktrees", "w", "docs", ".ralph", "notes.md"), "utf8"), "mine\n");
  mkdirSync(join(repo, ".ralph", "worktrees", "w", ".ralph"), { recursive: true });
  writeFileSync(join(repo, ".ralph", "worktrees", "w", ".ralph", "x"), "");
  const forced = await runRalph(["clean", "w", "--force"], repo, gitEnv());
  assert.equal(forced.code, 0, forced.stderr);
  // Known-false control: a worktree with nothing uncommitted is removed without --force.
  await runRalph(["run", "-n", "1", "--name", "v", "--worktree", "go", ...fakeAgent()], repo, gitEnv());
  assert.equal((await runRalph(["clean", "v"], repo, gitEnv())).code, 0);
});

test("a missing agent CLI: how to install it and --agent demo, no ralph logs --iteration hint; doctor fails naming the ralph.yaml", async () => {
  const dir = project();
  const env = cleanEnv({ PATH: "/usr/bin:/bin" });
  delete env.RALPH_CODEX_BIN;
  // The preflight refuses a missing agent before anything is made (its own test); this is the run past it.
  const result = await runRalph(["run", "-n", "1", "--name", "m", "--agent", "codex", "--preflight", "off", "go"], dir, env);
  assert.equal(result.code, 1, result.stderr);
  assert.match(result.stdout, /^next: codex is not installed here: install it with npm install -g @openai\/codex .*ralph run --agent demo/m);
  assert.doesNotMatch(result.stdout, /--iteration/);
  const status = await runRalph(["status", "m"], dir, env);
  assert.match(status.stdout, /^next {7}codex is not installed here/m);
  writeFileSync(join(dir, "ralph.yaml"), "max_iterations: 2\nagent: codex\n");
  const doctor = await runRalph(["doctor"], dir, env);
  assert.equal(doctor.code, 1, doctor.stdout);
  assert.match(doctor.stdout, /^PROBLEM {6}.*ralph\.yaml \(line 2\) asks for agent codex, which is not installed here: install it with npm install -g @openai\/codex/m);
  const json = JSON.parse((await runRalph(["doctor", "--json"], dir, env)).stdout) as { configured_agent: { agent: string; found: boolean } };
  assert.deepEqual([json.configured_agent.agent, json.configured_agent.found], ["codex", false]);
  // Known-false control: an agent that is there (the demo needs nothing) passes.
  writeFileSync(join(dir, "ralph.yaml"), "agent: demo\n");
  assert.equal((await runRalph(["doctor"], dir, env)).code, 0);
});

test("status shows peak memory in MiB, as the live line does", async (t) => {
  const dir = project();
  const ran = await runRalph(["run", "-n", "1", "--name", "s", "go", ...fakeAgent()], dir, cleanEnv({ RALPH_SUPERVISION: "cgroup" }));
  if (ran.code !== 3) return t.skip(`no cgroup supervision here: ${ran.stderr.trim()}`);
  const status = await runRalph(["status", "s"], dir);
  assert.match(status.stdout, /peak memory \d+\.\d MiB/);
  assert.doesNotMatch(status.stdout, /bytes/);
});
