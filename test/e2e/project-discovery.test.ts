// The project is the nearest directory holding .ralph/ or .git: a .ralph/ above the nearest repository root
// (a home directory that once ran ralph) never captures a nested repository's run; commands find the project
// from a subdirectory; a first run in a repository keeps .ralph/ out of git.
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, readdirSync, readFileSync, realpathSync } from "node:fs";
import { join } from "node:path";
import { cleanEnv, fakeAgent, runRalph, tempProjects } from "../helpers/cli.js";
import { git, isolateGitConfig, tempRepo } from "../helpers/git-repo.js";

after(isolateGitConfig());
const project = tempProjects("ralph-discovery-");
const env = () => cleanEnv({ GIT_CONFIG_GLOBAL: process.env.GIT_CONFIG_GLOBAL ?? "", GIT_CONFIG_NOSYSTEM: "1" });
const where = ["--", "sh", "-c", "pwd > where.txt"];

function runs(dir: string): string[] {
  return readdirSync(join(dir, ".ralph", "runs")).sort();
}

describe("project discovery", () => {
  test("a .ralph/ in a parent directory is not used inside a nested repository: the agent runs in the repository", async () => {
    const home = realpathSync(project());
    const first = await runRalph(["run", "--name", "home", "-n", "1", "go", ...where], home, env());
    assert.equal(first.code, 3, first.stderr);
    const repo = join(home, "code", "app");
    mkdirSync(join(repo, "src"), { recursive: true });
    git(repo, "init", "-q");
    // From the repository root and from a directory inside it.
    for (const [name, cwd] of [
      ["root", repo],
      ["inside", join(repo, "src")],
    ] as const) {
      const result = await runRalph(["run", "--name", name, "-n", "1", "go", ...where], cwd, env());
      assert.equal(result.code, 3, result.stderr);
    }
    assert.equal(readFileSync(join(repo, "where.txt"), "utf8").trim(), repo);
    assert.deepEqual(runs(repo), ["inside", "root"]);
    assert.deepEqual(runs(home), ["home"]);
    const listed = JSON.parse((await runRalph(["list", "--json"], join(repo, "src"), env())).stdout) as {
      runs: Array<{ id: string }>;
    };
    assert.deepEqual(listed.runs.map((run) => run.id).sort(), ["inside", "root"]);
    // Control: a plain directory under the parent (no repository of its own) still belongs to the parent.
    const plain = join(home, "notes");
    mkdirSync(plain);
    const control = JSON.parse((await runRalph(["list", "--json"], plain, env())).stdout) as {
      runs: Array<{ id: string }>;
    };
    assert.deepEqual(
      control.runs.map((run) => run.id),
      ["home"],
    );
  });

  test("inside one of ralph's own worktrees, commands find the project that made it", async () => {
    const repo = realpathSync(project());
    git(repo, "init", "-q", "-b", "main");
    git(repo, "config", "user.name", "Ada Tester");
    git(repo, "config", "user.email", "ada@example.test");
    git(repo, "commit", "-q", "--allow-empty", "-m", "start");
    const result = await runRalph(["run", "--worktree", "--name", "w", "-n", "1", "go", ...where], repo, env());
    assert.equal(result.code, 3, result.stderr);
    const worktree = join(repo, ".ralph", "worktrees", "w");
    assert.equal(readFileSync(join(worktree, "where.txt"), "utf8").trim(), worktree);
    const listed = JSON.parse((await runRalph(["list", "--json"], worktree, env())).stdout) as {
      runs: Array<{ id: string }>;
    };
    assert.deepEqual(
      listed.runs.map((run) => run.id),
      ["w"],
    );
  });
});

describe("finding the project from a subdirectory", () => {
  test("from a subdirectory, commands find the project by walking up to .ralph/", async () => {
    const dir = project();
    await runRalph(["run", "--name", "r", "-n", "1", "go", ...fakeAgent()], dir);
    const deep = join(dir, "src", "deeper");
    mkdirSync(deep, { recursive: true });
    const listed = JSON.parse((await runRalph(["list", "--json"], deep)).stdout) as { runs: Array<{ id: string }> };
    assert.deepEqual(
      listed.runs.map((run) => run.id),
      ["r"],
    );
    assert.equal((await runRalph(["status"], deep)).code, 0);
  });

  test("control: a directory with no .ralph/ above it has no runs", async () => {
    const listed = await runRalph(["list"], project());
    assert.equal(listed.stdout, "no runs in .ralph/runs\n");
  });
});

test("a first ralph run in a repository without ralph init keeps .ralph/ out of git add, and says so once", async () => {
  const repo = tempRepo({ ignoreRalph: false });
  const first = await runRalph(["run", "-n", "1", "go", ...fakeAgent()], repo, env());
  assert.equal(first.code, 3, first.stderr);
  assert.match(first.stdout, /git now ignores \.ralph\/ here \(added to \.git\/info\/exclude/);
  assert.equal(git(repo, "status", "--porcelain"), "", "no ?? .ralph/");
  assert.match(readFileSync(join(repo, ".git", "info", "exclude"), "utf8"), /^\.ralph\/$/m);
  const second = await runRalph(["run", "-n", "1", "go", ...fakeAgent()], repo, env());
  assert.doesNotMatch(second.stdout, /git now ignores/);
  // Known-false control: a repository whose .gitignore already has it is left alone.
  const ignoring = tempRepo();
  const before = readFileSync(join(ignoring, ".git", "info", "exclude"), "utf8");
  const third = await runRalph(["run", "-n", "1", "go", ...fakeAgent()], ignoring, env());
  assert.doesNotMatch(third.stdout, /git now ignores/);
  assert.equal(readFileSync(join(ignoring, ".git", "info", "exclude"), "utf8"), before);
});
