import { after, test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { excludeRunFiles } from "../../src/worktree/exclude-run-files.js";

const base = mkdtempSync(join(tmpdir(), "ralph-exclude-"));
after(() => rmSync(base, { recursive: true, force: true }));

test("excludeRunFiles: in a repository that does not ignore .ralph/, adds it to the local exclude file once", async () => {
  const repo = join(base, "repo");
  mkdirSync(repo);
  execFileSync("git", ["init", "-q"], { cwd: repo });
  const file = await excludeRunFiles(repo);
  assert.equal(file, join(repo, ".git", "info", "exclude"));
  assert.match(readFileSync(file ?? "", "utf8"), /^\.ralph\/$/m);
  assert.equal(await excludeRunFiles(repo), null, "already ignored: nothing added");
});

test("excludeRunFiles: outside any repository no git process is started; with a .git in the directory, git is asked", async () => {
  // A git on PATH that only records that it ran (and fails, as git does outside a repository).
  const bin = join(base, "counting-bin");
  const calls = join(base, "git-calls");
  mkdirSync(bin);
  writeFileSync(
    join(bin, "git"),
    `#!/bin/sh\necho "$@" >> '${calls}'\necho 'fatal: not a git repository' >&2\nexit 128\n`,
    { mode: 0o755 },
  );
  const lines = (): number => (existsSync(calls) ? readFileSync(calls, "utf8").split("\n").filter(Boolean).length : 0);
  const plain = join(tmpdir(), `ralph-exclude-no-repo-${process.pid}`);
  mkdirSync(plain, { recursive: true });
  const saved = {
    PATH: process.env["PATH"],
    GIT_DIR: process.env["GIT_DIR"],
    GIT_WORK_TREE: process.env["GIT_WORK_TREE"],
  };
  process.env["PATH"] = `${bin}:${saved.PATH ?? ""}`;
  delete process.env["GIT_DIR"];
  delete process.env["GIT_WORK_TREE"];
  try {
    // Only meaningful where no directory above the temporary one is a repository.
    if (existsSync(join(dirname(plain), ".git")) || existsSync("/.git")) return;
    assert.equal(await excludeRunFiles(plain), null);
    assert.equal(lines(), 0, "no git started outside any repository");
    // Known-false control: the same directory with a .git in it does start (the counting) git.
    mkdirSync(join(plain, ".git"));
    assert.equal(await excludeRunFiles(plain), null);
    assert.ok(lines() > 0, "git was asked once a .git exists");
  } finally {
    for (const [key, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
    rmSync(plain, { recursive: true, force: true });
  }
});
