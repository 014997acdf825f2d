// ralph's own git runs no code from the repository: hooks, fsmonitor, filters and post-checkout are off for
// every git command it runs, and a git command that hangs is ended by a signal or stop --now. Each attack
// has a control showing the same code does run under a plain git command.
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cleanEnv, finishWithin, onlyRunDir, processAlive, readEvents, runRalph, startRalph } from "../helpers/cli.js";
import { waitFor, waitForFile } from "../helpers/wait.js";
import { git, isolateGitConfig, tempRepo } from "../helpers/git-repo.js";

after(isolateGitConfig());

const env = (extra: Record<string, string> = {}) =>
  cleanEnv({ GIT_CONFIG_GLOBAL: process.env.GIT_CONFIG_GLOBAL ?? "", GIT_CONFIG_NOSYSTEM: "1", ...extra });

// Daemons a hook started (when one ran): killed after the tests, whatever they asserted.
const daemons: number[] = [];
after(() => {
  for (const pid of daemons) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // gone
    }
  }
});

/** A program that notes it ran in `marks`, starts a detached daemon (pid in `marks/<name>.pid`) and passes stdin on. */
function plantedProgram(path: string, marks: string, name: string): void {
  writeFileSync(
    path,
    `#!/bin/sh\necho ${name} >> "${marks}/ran"\n( env -i setsid sh -c 'echo $$ > "${marks}/${name}.$$.tmp"; mv "${marks}/${name}.$$.tmp" "${marks}/${name}.$$.pid"; exec sleep 60' & ) </dev/null >/dev/null 2>&1\ncat\n`,
  );
  chmodSync(path, 0o755);
}

function ran(marks: string): string[] {
  const file = join(marks, "ran");
  return existsSync(file) ? readFileSync(file, "utf8").trim().split("\n").sort() : [];
}

function daemonPids(marks: string): number[] {
  const pids = readdirSync(marks)
    .filter((name) => name.endsWith(".pid"))
    .map((name) => Number(readFileSync(join(marks, name), "utf8")));
  daemons.push(...pids);
  return pids;
}

function marksDir(repo: string): string {
  const marks = join(repo, "..", `${repo.split("/").pop() ?? "repo"}-marks`);
  mkdirSync(marks, { recursive: true });
  return marks;
}

const HOOKS = ["post-commit", "reference-transaction", "post-index-change"];

describe("ralph's git is inert", () => {
  test("hooks the agent writes into the shared .git/hooks do not run under ralph's --commit iteration commit (a plain git commit runs them)", async () => {
    const repo = tempRepo();
    const marks = marksDir(repo);
    // The agent plants the hooks in the repository's shared hooks directory, then leaves work to commit.
    const plant = HOOKS.map((hook) => `cp "${marks}/planted" "$(git rev-parse --git-common-dir)/hooks/${hook}"`).join(
      "; ",
    );
    plantedProgram(join(marks, "planted"), marks, "hook");
    const agent = ["--", "sh", "-c", `${plant}; echo work > made.txt`];
    const result = await runRalph(["run", "--worktree", "--name", "h", "-n", "1", "work", ...agent], repo, env());
    assert.equal(result.code, 3, result.stderr);
    assert.equal(git(repo, "log", "-1", "--format=%s", "ralph/h"), "ralph(h): iteration 1");
    assert.equal(git(repo, "show", "ralph/h:made.txt"), "work");
    assert.deepEqual(ran(marks), []);
    assert.deepEqual(daemonPids(marks), []);
    // Control: the same hooks run under a plain commit in the same worktree, and their daemon outlives it.
    const worktree = join(repo, ".ralph", "worktrees", "h");
    writeFileSync(join(worktree, "more.txt"), "more\n");
    git(worktree, "add", "more.txt");
    git(worktree, "commit", "--no-verify", "-qm", "control");
    assert.deepEqual([...new Set(ran(marks))], ["hook"]);
    assert.ok(ran(marks).length >= 3, ran(marks).join(","));
    await waitFor(() => readdirSync(marks).some((name) => name.endsWith(".pid")), "a hook's daemon", 5000);
    assert.ok(daemonPids(marks).some(processAlive));
  });

  test("a filter (clean/smudge and process) and a post-checkout hook do not run under ralph's git worktree add (a plain one runs them)", async () => {
    const repo = tempRepo();
    const marks = marksDir(repo);
    writeFileSync(join(repo, "a.txt"), "alpha\n");
    writeFileSync(join(repo, "b.txt"), "beta\n");
    git(repo, "add", "a.txt", "b.txt");
    git(repo, "commit", "-qm", "files");
    // Planted after the commit, as an agent in an earlier run could have.
    plantedProgram(join(marks, "smudge"), marks, "smudge");
    plantedProgram(join(marks, "process"), marks, "process");
    plantedProgram(join(repo, ".git", "hooks", "post-checkout"), marks, "post-checkout");
    writeFileSync(join(repo, ".git", "info", "attributes"), "a.txt filter=one\nb.txt filter=two\n");
    git(repo, "config", "filter.one.smudge", join(marks, "smudge"));
    git(repo, "config", "filter.one.clean", join(marks, "smudge"));
    git(repo, "config", "filter.two.process", join(marks, "process"));
    const result = await runRalph(
      ["run", "--worktree", "--name", "w", "-n", "1", "work", "--", "sh", "-c", "echo work > made.txt"],
      repo,
      env(),
    );
    assert.equal(result.code, 3, result.stderr);
    const worktree = join(repo, ".ralph", "worktrees", "w");
    assert.equal(readFileSync(join(worktree, "a.txt"), "utf8"), "alpha\n");
    assert.equal(git(repo, "show", "ralph/w:made.txt"), "work");
    assert.deepEqual(ran(marks), []);
    assert.deepEqual(daemonPids(marks), []);
    // Control: a plain `git worktree add` runs all three.
    spawnSync("git", ["worktree", "add", "-q", "-b", "control", join(marks, "control")], {
      cwd: repo,
      stdio: "ignore",
      timeout: 20_000,
    });
    assert.deepEqual([...new Set(ran(marks))], ["post-checkout", "process", "smudge"]);
  });

  test("a core.fsmonitor the agent sets to a hanging program is not run by the stall check (a plain git status hangs on it)", async () => {
    const repo = tempRepo();
    const marks = marksDir(repo);
    const hang = join(marks, "fsmonitor");
    writeFileSync(
      hang,
      `#!/bin/sh\necho fsmonitor >> "${marks}/ran"\necho $$ > "${marks}/fsmonitor.tmp"\nmv "${marks}/fsmonitor.tmp" "${marks}/fsmonitor.pid"\nexec sleep 60\n`,
    );
    chmodSync(hang, 0o755);
    const agent = ["--", "sh", "-c", `git config core.fsmonitor "${hang}"; echo "$RALPH_ITERATION" > made.txt`];
    const result = await runRalph(["run", "--stall-limit", "3", "-n", "2", "work", ...agent], repo, env(), 30_000);
    assert.equal(result.code, 3, result.stderr);
    // The program never ran (it would have marked it), so nothing of ralph waited on it.
    assert.deepEqual(ran(marks), []);
    // Control: a plain git status runs the program and waits on it.
    const control = spawnSync("git", ["status", "--porcelain"], {
      cwd: repo,
      stdio: "ignore",
      timeout: 1500,
      killSignal: "SIGKILL",
    });
    assert.equal(control.error && (control.error as NodeJS.ErrnoException).code, "ETIMEDOUT");
    assert.deepEqual(ran(marks), ["fsmonitor"]);
    await waitForFile(join(marks, "fsmonitor.pid"), 5000);
    daemonPids(marks);
  });
});

/**
 * A `git` on PATH that hangs in `subcommand` once `<dir>/armed` exists (with a child in its group), recording both pids;
 * the real git otherwise. It hangs for ten minutes, far past any wait of the test, and writes `<dir>/hung.exited` if it
 * ever gets past its wait: only being ended with its group ends it within the test.
 */
function hangingGit(dir: string, subcommand: string): { bin: string; pids: string; armed: string; exited: string } {
  const bin = join(dir, "bin");
  mkdirSync(bin, { recursive: true });
  const real = spawnSync("sh", ["-c", "command -v git"], { encoding: "utf8" }).stdout.trim();
  const pids = join(dir, "hung.pids");
  writeFileSync(
    join(bin, "git"),
    `#!/bin/sh\nfor arg in "$@"; do\n  if [ "$arg" = ${subcommand} ] && [ -e "${dir}/armed" ]; then sleep 600 & echo "$$ $!" > "${pids}.tmp"; mv "${pids}.tmp" "${pids}"; wait; echo "$?" > "${dir}/hung.exited"; exit 1; fi\ndone\nexec "${real}" "$@"\n`,
  );
  chmodSync(join(bin, "git"), 0o755);
  return { bin, pids, armed: join(dir, "armed"), exited: join(dir, "hung.exited") };
}

describe("a git command that hangs is ended with its group", () => {
  const cases = [
    {
      subcommand: "status",
      how: "SIGTERM",
      where: "the stall check",
      flags: ["--stall-limit", "3"],
      armedAtStart: false,
    },
    {
      subcommand: "status",
      how: "stop --now",
      where: "the stall check",
      flags: ["--stall-limit", "3"],
      armedAtStart: false,
    },
    {
      subcommand: "status",
      how: "SIGTERM",
      where: "the stall check's first look",
      flags: ["--stall-limit", "3"],
      armedAtStart: true,
    },
    {
      subcommand: "status",
      how: "stop --now",
      where: "the stall check's first look",
      flags: ["--stall-limit", "3"],
      armedAtStart: true,
    },
    {
      subcommand: "commit",
      how: "SIGTERM",
      where: "the iteration's commit",
      flags: ["--worktree", "--name", "c"],
      armedAtStart: false,
    },
    {
      subcommand: "commit",
      how: "stop --now",
      where: "the iteration's commit",
      flags: ["--worktree", "--name", "c"],
      armedAtStart: false,
    },
  ] as const;
  for (const { subcommand, how, where, flags, armedAtStart } of cases) {
    test(`${how} during a hanging git ${subcommand} (${where}) ends the run, the git and its child ended with their group`, async () => {
      const repo = tempRepo();
      const marks = marksDir(repo);
      const { bin, pids, armed, exited } = hangingGit(marks, subcommand);
      const runEnv = env({ PATH: `${bin}:${process.env.PATH ?? ""}` });
      if (armedAtStart) writeFileSync(armed, "");
      const run = startRalph(
        ["run", ...flags, "-n", "3", "work", "--", "sh", "-c", `echo $RALPH_ITERATION > made.txt; touch "${armed}"`],
        repo,
        runEnv,
      );
      // The agent arms the fake git (unless it was armed before the run): the git command after iteration 1 hangs.
      await waitForFile(pids, 20_000);
      const hung = readFileSync(pids, "utf8").trim().split(" ").map(Number);
      daemons.push(...hung);
      // Known-false control: the fake git really is hanging, so only ending it can free the run.
      assert.ok(hung.every(processAlive), "the hanging git is running");
      if (how === "SIGTERM") run.child.kill("SIGTERM");
      else {
        const stop = await runRalph(["stop", "--now"], repo, runEnv, 20_000);
        assert.equal(stop.code, 0, stop.stderr);
      }
      // The git hangs for ten minutes: the run ending within this wait, the git gone, means ralph ended it.
      // How promptly is measured by the stop-latency bench, not asserted here.
      const result = await finishWithin(run, 20_000);
      if (how === "SIGTERM") assert.equal(result.signal, "SIGTERM", result.stderr);
      else assert.equal(readEvents(onlyRunDir(repo)).at(-1)?.reason, "STOPPED");
      for (const pid of hung) assert.equal(processAlive(pid), false, `pid ${pid} left running`);
      // The fake git never got past its wait: it was ended with its child, not left to exit once its child died.
      assert.equal(existsSync(exited), false, "the hanging git ran on after its child ended");
    });
  }
});
