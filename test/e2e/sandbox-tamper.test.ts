// A repository the sandboxed agent plants in the work tree (SPEC section 15, round 2) is found at the end
// of the iteration: the iteration fails with a sandbox_tamper event naming it, it is moved out of the work
// tree (so the person's git never runs the fsmonitor or ssh command it names), and `ralph report` lists it.
// The same holds for a repository planted by a check (the agent's code, run with the tree writable) on the
// last iteration. The known-false controls: the same agent unsandboxed leaves everything in place, and the
// person's git in it runs what it names.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { cleanEnv, RALPH, readEvents } from "../helpers/cli.js";
import { within } from "../helpers/wait.js";
import { cleanupAfterTests } from "../fixtures/e2e-cleanup.js";
import { probeSandbox } from "../../src/sandbox/sandbox-probe.js";

const cleanup = cleanupAfterTests();
const probe = probeSandbox(process.env);

// A nested repository whose config names an fsmonitor, one inside node_modules, a directory shaped as a
// repository with no `.git` at all (HEAD, objects/, refs/ and a config naming an ssh command that `git
// fetch` runs), a gitlink added to the index, and .git/commondir pointing git at a directory of the
// agent's (its config names an fsmonitor the person's git status at the top runs; last: git inside follows
// it from then on).
const PLANT = `set -e
mkdir -p sub && git -C sub init -q && printf '[core]\\n\\tfsmonitor = touch PWNED\\n' >> sub/.git/config
mkdir -p node_modules/x && git -C node_modules/x init -q && printf '[core]\\n\\tfsmonitor = touch PWNED\\n' >> node_modules/x/.git/config
mkdir -p bare/objects bare/refs && echo 'ref: refs/heads/main' > bare/HEAD
printf '[core]\\n\\tbare = true\\n\\tsshCommand = touch PWNED; false\\n[remote "origin"]\\n\\turl = ssh://example.invalid/x\\n' > bare/config
git update-index --add --cacheinfo 160000,1111111111111111111111111111111111111111,linked
mkdir -p evil && cp -r .git/objects .git/refs evil/ && printf '[core]\n\trepositoryformatversion = 0\n\tfsmonitor = touch PWNED\n' > evil/config
echo ../evil > .git/commondir
echo planted > planted.txt`;

// The agent writes a check script; the check (the person's --check, running the agent's code) plants the repository.
const PLANT_IN_CHECK = `printf 'mkdir -p late && git -C late init -q && printf "[core]\\\\n\\\\tfsmonitor = touch PWNED\\\\n" >> late/.git/config\\n' > plant.sh
echo planted > planted.txt`;

async function plant(sandboxed: boolean, agent = PLANT, extra: string[] = []) {
  const { dir, runDir } = cleanup.project("ralph-sandbox-tamper-");
  const git = spawnSync("git", ["init", "-q", dir], { encoding: "utf8" });
  assert.equal(git.status, 0, git.stderr);
  const ralph = cleanup.ralph(
    ["run", "--name", "x", "-n", "1", "--agent", "command", ...extra, "go", "--", "/bin/sh", "-c", agent],
    dir,
    cleanEnv({ RALPH_SANDBOX: sandboxed ? "on" : "off" }),
  );
  const result = await within(ralph.done, 60_000, "ralph's exit");
  assert.ok(existsSync(join(dir, "planted.txt")), `the agent did not run:\n${result.stdout}${result.stderr}`);
  return { dir, runDir, result, events: readEvents(runDir) };
}

/** The index's gitlinks, read with git pointed at nothing the agent planted. */
function gitlinks(dir: string): string[] {
  const listed = spawnSync("git", ["-c", "core.fsmonitor=false", "ls-files", "-s"], { cwd: dir, encoding: "utf8" });
  return listed.stdout.split("\n").filter((line) => line.startsWith("160000"));
}

/** What the person would run in each planted directory (each enters it: a nested repository's own config applies). */
function personsGit(dir: string): void {
  for (const args of [
    ["status", "--short"],
    ["-C", "sub", "status"],
    ["-C", "node_modules/x", "status"],
    ["-C", "bare", "fetch", "-q"],
  ])
    spawnSync("git", args, { cwd: dir, encoding: "utf8", timeout: 30_000 });
}

describe(
  "a repository planted by the sandboxed agent",
  { concurrency: 2, skip: probe.ok ? false : `no sandbox here: ${probe.why}` },
  () => {
    test("fails the iteration with sandbox_tamper, is moved out of the work tree, and ralph report lists it", async () => {
      const { dir, runDir, result, events } = await plant(true);
      const tamper = events.find((event) => event.type === "sandbox_tamper");
      assert.deepEqual(
        tamper?.paths,
        [".git/commondir", "bare", "node_modules/x/.git", "sub/.git", "linked (a gitlink in the index)"],
        result.stdout,
      );
      assert.equal(events.find((event) => event.type === "iteration_ended")?.result, "failed");
      assert.equal(existsSync(join(dir, "sub", ".git")), false);
      assert.equal(existsSync(join(dir, "node_modules", "x", ".git")), false);
      assert.equal(existsSync(join(dir, "bare")), false);
      assert.equal(existsSync(join(dir, ".git", "commondir")), false);
      assert.deepEqual(gitlinks(dir), []);
      // The person's git, in each directory the agent planted a repository in, runs nothing the agent planted.
      personsGit(dir);
      for (const path of ["sub/PWNED", "node_modules/x/PWNED", "bare/PWNED", "PWNED"])
        assert.equal(existsSync(join(dir, path)), false, path);
      assert.equal(existsSync(join(runDir, "planted")), true);
      const report = spawnSync(process.execPath, [RALPH, "report", "x"], {
        cwd: dir,
        env: cleanEnv(),
        encoding: "utf8",
        timeout: 30_000,
      });
      assert.match(
        report.stdout,
        /Planted by the agent[\s\S]*iteration 1: `\.git\/commondir`, `bare`, `node_modules\/x\/\.git`, `sub\/\.git`/,
      );
    });

    test("control without the sandbox: all stay where the agent put them, and the person's git runs what they name", async () => {
      const { dir, events } = await plant(false);
      assert.equal(
        events.some((event) => event.type === "sandbox_tamper"),
        false,
      );
      assert.equal(existsSync(join(dir, "sub", ".git")), true);
      assert.equal(existsSync(join(dir, ".git", "commondir")), true);
      personsGit(dir);
      for (const path of ["PWNED", "sub/PWNED", "node_modules/x/PWNED", "bare/PWNED"])
        assert.equal(existsSync(join(dir, path)), true, `${path}: the attack itself did not work`);
    });

    test("a repository a check plants on the last iteration is moved out too, and fails the checks", async () => {
      const { dir, result, events } = await plant(true, PLANT_IN_CHECK, ["--check", "sh plant.sh"]);
      assert.deepEqual(events.find((event) => event.type === "sandbox_tamper")?.paths, ["late/.git"], result.stdout);
      const checked = events.filter((event) => event.type === "criteria_checked");
      assert.ok(checked.length > 0 && checked.every((event) => event.passed === false), JSON.stringify(checked));
      assert.equal(existsSync(join(dir, "late", ".git")), false);
      spawnSync("git", ["-C", "late", "status"], { cwd: dir, encoding: "utf8", timeout: 30_000 });
      assert.equal(existsSync(join(dir, "late", "PWNED")), false);
    });

    test("control without the sandbox: the check's repository stays, and git in it runs its fsmonitor", async () => {
      const { dir, events } = await plant(false, PLANT_IN_CHECK, ["--check", "sh plant.sh"]);
      assert.equal(
        events.some((event) => event.type === "sandbox_tamper"),
        false,
      );
      spawnSync("git", ["-C", "late", "status"], { cwd: dir, encoding: "utf8", timeout: 30_000 });
      assert.equal(existsSync(join(dir, "late", "PWNED")), true, "the attack itself did not work");
    });
  },
);
