// Paths a person types are read from where they typed them, as every other command-line tool does: from a
// subdirectory of the project, -p/--prompt-file and --tasks name that directory's files, and a --check or
// --notify command line runs there (in the run's own tree); a message naming a path shows the resolved one.
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cleanEnv, onlyRunDir, runRalph, tempProjects } from "../helpers/cli.js";
import { git, isolateGitConfig } from "../helpers/git-repo.js";
import { after } from "node:test";

after(isolateGitConfig());
const project = tempProjects("ralph-typed-paths-");
const env = () => cleanEnv({ GIT_CONFIG_GLOBAL: process.env.GIT_CONFIG_GLOBAL ?? "", GIT_CONFIG_NOSYSTEM: "1" });
// The agent runs at the project's root and keeps the prompt it was given.
const keepPrompt = ["--", "sh", "-c", "cat > got-prompt.txt"];

/** A repository with a root and a sub/ directory, each with a SUBPROMPT.md of its own. */
function repoWithSub(): { root: string; sub: string } {
  const root = realpathSync(project());
  git(root, "init", "-q");
  const sub = join(root, "sub");
  mkdirSync(sub);
  writeFileSync(join(root, "SUBPROMPT.md"), "the root's prompt\n");
  writeFileSync(join(sub, "SUBPROMPT.md"), "the subdirectory's prompt\n");
  return { root, sub };
}

test("from a subdirectory, -p, --check and --notify are read where they were typed", async () => {
  const { root, sub } = repoWithSub();
  // Only sub/ has here.txt: the check passes only when it runs in sub/.
  writeFileSync(join(sub, "here.txt"), "");
  const result = await runRalph(
    [
      "run",
      "-n",
      "1",
      "-p",
      "SUBPROMPT.md",
      "--check",
      "test -f here.txt",
      "--notify",
      "cat >> notified.jsonl",
      ...keepPrompt,
    ],
    sub,
    env(),
  );
  assert.equal(result.code, 0, result.stderr);
  assert.equal(readFileSync(join(root, "got-prompt.txt"), "utf8"), "the subdirectory's prompt\n");
  assert.match(readFileSync(join(sub, "notified.jsonl"), "utf8"), /"type":"run_ended"/);
  assert.equal(existsSync(join(root, "notified.jsonl")), false);
  // The check keeps its directory in state.md, so `ralph continue` checks it in the same place.
  assert.match(readFileSync(join(onlyRunDir(root), "state.md"), "utf8"), /dir: sub/);
});

test("from a subdirectory, --tasks names that directory's task list", async () => {
  const { root, sub } = repoWithSub();
  writeFileSync(join(sub, "TASKS.md"), "- [ ] the task written in sub\n");
  const result = await runRalph(["run", "-n", "1", "--tasks", "TASKS.md", "go", ...keepPrompt], sub, env());
  assert.equal(result.code, 3, result.stderr);
  assert.match(readFileSync(join(root, "got-prompt.txt"), "utf8"), /the task written in sub/);
});

test("a path that is not there is named as resolved, from where it was typed", async () => {
  const { sub } = repoWithSub();
  const prompt = await runRalph(["run", "-n", "1", "-p", "MISSING.md", ...keepPrompt], sub, env());
  assert.equal(prompt.code, 2, prompt.stderr);
  assert.match(prompt.stderr, new RegExp(`^ralph: --prompt-file ${join(sub, "MISSING.md")}: `));
  const tasks = await runRalph(["run", "-n", "1", "--tasks", "NOPE.md", "go", ...keepPrompt], sub, env());
  assert.equal(tasks.code, 2, tasks.stderr);
  assert.match(tasks.stderr, new RegExp(`^ralph: --tasks ${join(sub, "NOPE.md")}: `));
});
