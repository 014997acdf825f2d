// The inert git runner: a driver named in any odd way is still emptied, and a timeout ends git's whole group.
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { inertConfigArgs, pushConfigArgs, repositoryDrivers } from "../../src/worktree/inert-git.js";
import { runGit } from "../../src/worktree/run-git.js";
import { git, isolateGitConfig, tempRepo } from "../helpers/git-repo.js";

after(isolateGitConfig());

test("repositoryDrivers empties every program key of every driver listed, whatever its name holds", () => {
  const env = repositoryDrivers(
    [
      "filter.a=b.c.clean",
      "diff.Tex.textconv",
      "merge.ours.driver",
      "diff.external",
      "filter.x.required",
      "user.name",
    ].join("\0"),
  );
  const pairs = Array.from(
    { length: Number(env.GIT_CONFIG_COUNT) },
    (_, i) => `${env[`GIT_CONFIG_KEY_${i}`]}=${env[`GIT_CONFIG_VALUE_${i}`]}`,
  );
  assert.deepEqual(pairs.sort(), [
    "diff.Tex.command=",
    "diff.Tex.textconv=",
    "diff.external=",
    "filter.a=b.c.clean=",
    "filter.a=b.c.process=",
    "filter.a=b.c.required=false",
    "filter.a=b.c.smudge=",
    "filter.x.clean=",
    "filter.x.process=",
    "filter.x.required=false",
    "filter.x.smudge=",
    "merge.ours.driver=",
  ]);
});

test("a push's switches are the inert ones, all but those naming the person's own ssh, proxy, askpass and credential helper", () => {
  const pairs = (args: string[]) => args.filter((_, index) => index % 2 === 1);
  const kept = new Set(["core.sshCommand", "core.gitProxy", "core.askPass", "credential.helper"]);
  const expected = pairs(inertConfigArgs()).filter((pair) => !kept.has(pair.slice(0, pair.indexOf("="))));
  assert.deepEqual(pairs(pushConfigArgs()), expected);
  assert.ok(expected.includes("core.hooksPath=/dev/null") && expected.includes("core.fsmonitor=false"));
  assert.ok(pushConfigArgs().every((arg, index) => index % 2 === 1 || arg === "-c"));
});

test("a required clean filter whose name has '=' and '.' in it does not run under runGit add (a plain git add runs it)", async () => {
  const repo = tempRepo();
  const mark = join(repo, "..", `${repo.split("/").pop() ?? ""}-filter-ran`);
  const program = join(repo, "..", `${repo.split("/").pop() ?? ""}-filter.sh`);
  writeFileSync(program, `#!/bin/sh\necho ran >> "${mark}"\ncat\n`);
  chmodSync(program, 0o755);
  git(repo, "config", "filter.a=b.c.clean", program);
  git(repo, "config", "filter.a=b.c.required", "true");
  writeFileSync(join(repo, ".gitattributes"), "*.txt filter=a=b.c\n");
  writeFileSync(join(repo, "one.txt"), "one\n");
  const added = await runGit(repo, ["add", "one.txt"]);
  assert.equal(added.ok, true, added.ok ? "" : added.stderr);
  assert.equal(existsSync(mark), false);
  // Control: plain git runs it.
  writeFileSync(join(repo, "two.txt"), "two\n");
  git(repo, "add", "two.txt");
  assert.match(readFileSync(mark, "utf8"), /^ran\n/);
});

test("a git command past its timeout is ended and reported, not waited for", async () => {
  const repo = tempRepo();
  const started = Date.now();
  // Hashing a FIFO nobody writes to blocks git for good.
  const fifo = join(repo, "..", `${repo.split("/").pop() ?? ""}-fifo`);
  assert.equal(spawnSync("mkfifo", [fifo]).status, 0);
  const result = await runGit(repo, ["hash-object", fifo], process.env, { timeoutMs: 300 });
  assert.equal(result.ok, false);
  assert.equal(result.ok ? null : result.code, "ETIMEDOUT");
  assert.ok(Date.now() - started < 3000, `took ${Date.now() - started} ms`);
});
