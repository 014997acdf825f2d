// `ralph land RUN` on real repositories: merged into the person's branch only when asked, pushed to a local
// bare remote with --push, a pull request through a fake gh with --pr, and every refusal (exit 2, one line).
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { execFileSync } from "node:child_process";
import { cleanEnv, runRalph } from "../helpers/cli.js";
import { checkoutSnapshot, git, isolateGitConfig, tempRepo } from "../helpers/git-repo.js";

after(isolateGitConfig());

/** A PATH with node and git but never a real gh; `extra` first. */
function pathWith(extra: string[] = []): string {
  const git = execFileSync("sh", ["-c", "command -v git"], { encoding: "utf8" }).trim();
  return [...extra, dirname(process.execPath), dirname(git), "/usr/bin", "/bin"].join(":");
}
const env = (extra: Record<string, string> = {}) =>
  cleanEnv({
    GIT_CONFIG_GLOBAL: process.env.GIT_CONFIG_GLOBAL ?? "",
    GIT_CONFIG_NOSYSTEM: "1",
    PATH: pathWith(),
    ...extra,
  });

/** A repository with a bare remote `origin` (main pushed) and a --worktree run `w` that ended DONE (its check passed) with feature.txt committed on ralph/w. */
async function landedRepo(): Promise<{ repo: string; remote: string }> {
  const repo = tempRepo();
  const remote = `${repo}-remote.git`;
  git(repo, "init", "-q", "--bare", "-b", "main", remote);
  git(repo, "remote", "add", "origin", remote);
  git(repo, "push", "-q", "origin", "main");
  const agent = [
    "--",
    process.execPath,
    "-e",
    "require('fs').writeFileSync('feature.txt', 'a feature\\n'); console.log('<promise>DONE</promise>')",
  ];
  const run = await runRalph(
    [
      "run",
      "--worktree",
      "-n",
      "1",
      "--name",
      "w",
      "--completion-promise",
      "DONE",
      "--check",
      "test -f feature.txt",
      "work",
      ...agent,
    ],
    repo,
    env(),
  );
  assert.equal(run.code, 0, run.stderr + run.stdout); // DONE, its one iteration committed
  assert.match(run.stdout, /^report: ralph report w; merge it into your branch: ralph land w/m);
  assert.equal(git(repo, "show", "ralph/w:feature.txt"), "a feature");
  return { repo, remote };
}

const remoteRefs = (remote: string) =>
  git(remote, "for-each-ref", "--format=%(refname) %(objectname)")
    .split("\n")
    .filter((line) => line !== "");

describe("ralph land", () => {
  test("refusals: exit 2, one line, nothing merged, pushed or opened", async () => {
    const { repo, remote } = await landedRepo();
    const refs = remoteRefs(remote);
    const cases: Array<[string[], RegExp, () => void]> = [
      [["land", "nope"], /^ralph: RUN nope: no such run/, () => undefined],
      [["land", "w", "--pr"], /^ralph: --pr needs --push REMOTE/, () => undefined],
      [["land", "w", "--push", "origin", "--pr"], /^ralph: --pr: gh is not installed/, () => undefined],
      [
        ["land", "w", "--push", "--upload-pack=touch /tmp/x"],
        /^ralph: --push: expected a remote name or URL/,
        () => undefined,
      ],
      [
        ["land", "w"],
        /^ralph: your checkout has uncommitted changes \(1 file\(s\), e\.g\. README\.md\); commit or stash them first\n$/,
        () => writeFileSync(join(repo, "README.md"), "edited\n"),
      ],
      [
        ["land", "w"],
        /^ralph: run w started from main, you are on topic; check out main, or give --force to land it here\n$/,
        () => {
          git(repo, "checkout", "-q", "README.md");
          git(repo, "checkout", "-q", "-b", "topic");
        },
      ],
    ];
    for (const [args, message, arrange] of cases) {
      arrange();
      const before = checkoutSnapshot(repo);
      const result = await runRalph(args, repo, env());
      assert.equal(result.code, 2, `${args.join(" ")}: ${result.stderr}`);
      assert.match(result.stderr, message);
      assert.equal(result.stderr.split("\n").length, 2, "one line");
      assert.equal(result.stdout, "");
      assert.deepEqual(checkoutSnapshot(repo), before, "the checkout is as it was");
      assert.deepEqual(remoteRefs(remote), refs, "nothing pushed");
    }
    // --force lands it on the other branch after all.
    const forced = await runRalph(["land", "w", "--force"], repo, env());
    assert.equal(forced.code, 0, forced.stderr);
    assert.equal(readFileSync(join(repo, "feature.txt"), "utf8"), "a feature\n");
  });

  test("a run that did not end DONE is landed only with --force: without it, exit 2 and one line saying why", async () => {
    const { repo, remote } = await landedRepo();
    const agent = [
      "--",
      process.execPath,
      "-e",
      "require('fs').writeFileSync('half.txt', 'half done\\n'); console.log('<promise>DONE</promise>')",
    ];
    const run = await runRalph(
      [
        "run",
        "--worktree",
        "-n",
        "1",
        "--name",
        "m",
        "--completion-promise",
        "DONE",
        "--check",
        "exit 1",
        "work",
        ...agent,
      ],
      repo,
      env(),
    );
    assert.equal(run.code, 3, run.stderr + run.stdout);
    const refs = remoteRefs(remote);
    for (const args of [
      ["land", "m"],
      ["land", "m", "--push", "origin"],
    ]) {
      const before = checkoutSnapshot(repo);
      const refused = await runRalph(args, repo, env());
      assert.equal(refused.code, 2, refused.stderr);
      assert.equal(
        refused.stderr,
        "ralph: run m ended MAX_ITERATIONS, not DONE (checks 0/1 passed · no review); give --force to land it anyway\n",
      );
      assert.equal(refused.stdout, "");
      assert.deepEqual(checkoutSnapshot(repo), before, "nothing merged");
      assert.deepEqual(remoteRefs(remote), refs, "nothing pushed");
    }
    const forced = await runRalph(["land", "m", "--force"], repo, env());
    assert.equal(forced.code, 0, forced.stderr);
    assert.match(
      forced.stdout,
      /^landing run m: MAX_ITERATIONS · checks 0\/1 passed · no review\nmerged ralph\/m into main/,
    );
    assert.equal(readFileSync(join(repo, "half.txt"), "utf8"), "half done\n");
  });

  test("land merges the run's branch into the current branch, and pushes nothing", async () => {
    const { repo, remote } = await landedRepo();
    const refs = remoteRefs(remote);
    const result = await runRalph(["land", "w"], repo, env());
    assert.equal(result.code, 0, result.stderr);
    assert.match(
      result.stdout,
      /^landing run w: DONE · checks 1\/1 passed · no review\nmerged ralph\/w into main \([0-9a-f]{12}\)\n$/,
    );
    assert.equal(git(repo, "rev-parse", "HEAD^2"), git(repo, "rev-parse", "ralph/w"));
    assert.equal(readFileSync(join(repo, "feature.txt"), "utf8"), "a feature\n");
    assert.equal(git(repo, "status", "--porcelain"), "");
    assert.deepEqual(remoteRefs(remote), refs);
  });

  test("a branch that conflicts with the current branch: exit 1, the merge aborted, the checkout as it was", async () => {
    const { repo } = await landedRepo();
    writeFileSync(join(repo, "feature.txt"), "the person's own feature\n");
    git(repo, "add", "feature.txt");
    git(repo, "commit", "-q", "-m", "mine");
    // The aborted merge rewrites the index file (same entries, fresh stat data): its entries are compared.
    const state = () => ({
      ...checkoutSnapshot(repo),
      index: git(repo, "ls-files", "--stage"),
      feature: readFileSync(join(repo, "feature.txt"), "utf8"),
    });
    const before = state();
    const result = await runRalph(["land", "w"], repo, env());
    assert.equal(result.code, 1);
    assert.equal(
      result.stderr,
      "ralph: ralph/w does not merge into main (conflicts in feature.txt); the merge was aborted, nothing changed\n",
    );
    assert.deepEqual(state(), before);
    assert.throws(() => git(repo, "rev-parse", "-q", "--verify", "MERGE_HEAD"));
  });

  test("--push REMOTE pushes ralph/w to a bare remote (never its default branch); REMOTE:BRANCH names the branch there", async () => {
    const { repo, remote } = await landedRepo();
    const main = git(remote, "rev-parse", "main");
    const before = checkoutSnapshot(repo);
    const result = await runRalph(["land", "w", "--push", "origin"], repo, env());
    assert.equal(result.code, 0, result.stderr);
    assert.equal(
      result.stdout,
      `landing run w: DONE · checks 1/1 passed · no review\npushed ralph/w to origin (${remote}) as ralph/w\n`,
    );
    assert.equal(git(remote, "rev-parse", "ralph/w"), git(repo, "rev-parse", "ralph/w"));
    assert.equal(git(remote, "rev-parse", "main"), main, "the remote's default branch is untouched");
    assert.deepEqual(checkoutSnapshot(repo), before, "nothing merged locally");
    const named = await runRalph(["land", "w", "--push", "origin:feature-x"], repo, env());
    assert.equal(named.code, 0, named.stderr);
    assert.equal(git(remote, "rev-parse", "feature-x"), git(repo, "rev-parse", "ralph/w"));
  });

  test("--push runs none of the repository's git config: pushurl ext::, protocol.ext.allow, url.insteadOf and a receivepack are ignored (plain git push runs them)", async () => {
    const { repo, remote } = await landedRepo();
    const mark = `${repo}-pwned`;
    const program = `${repo}-evil.sh`;
    writeFileSync(program, `#!/bin/sh\necho ran >> "${mark}"\nexit 1\n`);
    chmodSync(program, 0o755);
    // What an agent writes into the shared .git/config after the run started.
    git(repo, "config", "remote.origin.pushurl", `ext::${program}`);
    git(repo, "config", "protocol.ext.allow", "always");
    git(repo, "config", "protocol.allow", "always");
    git(repo, "config", `url.ext::${program} #.insteadOf`, remote);
    git(repo, "config", "remote.origin.receivepack", program);
    git(repo, "config", "core.sshCommand", program);
    git(repo, "config", "credential.helper", `!${program}`);
    const result = await runRalph(["land", "w", "--push", "origin"], repo, env());
    assert.equal(result.code, 0, result.stderr);
    assert.equal(existsSync(mark), false, "the agent's program did not run");
    assert.equal(
      git(remote, "rev-parse", "ralph/w"),
      git(repo, "rev-parse", "ralph/w"),
      "pushed to the URL origin had when the run started",
    );
    // A URL given on the command line with a transport that runs a program is refused by git, and runs nothing.
    const ext = await runRalph(["land", "w", "--push", `ext::${program}`], repo, env());
    assert.equal(ext.code, 1);
    assert.match(ext.stderr, /^ralph: git push ext::.*transport 'ext' not allowed\n$/);
    assert.equal(existsSync(mark), false, "the ext:: URL ran nothing");
    // A remote the run did not record is refused, not looked up in today's config.
    git(repo, "remote", "add", "later", remote);
    const later = await runRalph(["land", "w", "--push", "later"], repo, env());
    assert.equal(later.code, 2);
    assert.equal(
      later.stderr,
      "ralph: --push later: run w recorded no remote later when it started; give the remote's URL instead\n",
    );
    // Control: a plain git push of the same branch runs the agent's program.
    assert.throws(() => git(repo, "push", "-q", "origin", "ralph/w:refs/heads/control"));
    assert.match(readFileSync(mark, "utf8"), /ran/);
  });

  test("--pr opens a pull request through gh: head the pushed branch, base the branch the run started from, the report as its body", async () => {
    const { repo, remote } = await landedRepo();
    const bin = `${repo}-bin`;
    mkdirSync(bin);
    const record = `${repo}-gh.json`;
    // The fake gh records what gh would read to pick the repository: the remote of the directory it runs in.
    const seeRemote = `let remote = ""; try { remote = require("child_process").execFileSync("git", ["config", "--get", "remote.origin.url"], { encoding: "utf8" }).trim(); } catch {}`;
    writeFileSync(
      join(bin, "gh"),
      `#!${process.execPath}\nconst fs = require("fs");\n${seeRemote}\nfs.writeFileSync(${JSON.stringify(record)}, JSON.stringify({ args: process.argv.slice(2), body: fs.readFileSync(0, "utf8"), cwd: process.cwd(), remote }));\nconsole.log("https://example.test/pull/7");\n`,
    );
    chmodSync(join(bin, "gh"), 0o755);
    // The agent pointed the checkout's origin at a repository of its own after the run started.
    git(repo, "remote", "set-url", "origin", "https://github.com/agent/fork.git");
    execFileSync(join(bin, "gh"), ["control"], { cwd: repo, env: env(), input: "" });
    assert.equal(
      (JSON.parse(readFileSync(record, "utf8")) as { remote: string }).remote,
      "https://github.com/agent/fork.git",
      "control: gh run in the checkout sees the agent's remote",
    );
    const result = await runRalph(["land", "w", "--push", "origin", "--pr"], repo, env({ PATH: pathWith([bin]) }));
    assert.equal(result.code, 0, result.stderr);
    assert.equal(
      result.stdout,
      `landing run w: DONE · checks 1/1 passed · no review\npushed ralph/w to origin (${remote}) as ralph/w\nopened a pull request of ralph/w into main: https://example.test/pull/7\n`,
    );
    const called = JSON.parse(readFileSync(record, "utf8")) as {
      args: string[];
      body: string;
      cwd: string;
      remote: string;
    };
    assert.equal(called.remote, "", "gh ran outside any repository: it reads no remote the agent set");
    assert.ok(!called.cwd.startsWith(repo), called.cwd);
    assert.deepEqual(called.args, [
      "pr",
      "create",
      "--head",
      "ralph/w",
      "--base",
      "main",
      "--title",
      "ralph w: DONE",
      "--body-file",
      "-",
    ]);
    assert.match(called.body, /^# ralph run w: DONE\n/);
    assert.match(called.body, /\| Branch \| `ralph\/w` from `main` /);
    assert.match(called.body, /feature\.txt +\| 1 \+/);
    assert.equal(git(remote, "rev-parse", "ralph/w"), git(repo, "rev-parse", "ralph/w"));
  });
});
