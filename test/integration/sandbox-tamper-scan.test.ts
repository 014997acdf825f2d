// The tamper scan (see src/sandbox/tamper-scan.ts), run on real repositories. Its git acts on the work tree's
// own index whatever the environment ralph was started in (under a git hook that runs ralph, GIT_DIR and
// GIT_INDEX_FILE name the outer repository), and reads a planted gitlink's name literally (one named as a
// magic pathspec must not take the rest of the index out and stay itself). A `.git/commondir` that is a link
// to nothing yet is planted too, and two planted repositories are both moved out however alike their paths.
// The known-false controls: a git that keeps the hook's variables reads the outer index; a plain `git rm`
// reads the name as a pattern.
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { watchTamper } from "../../src/sandbox/tamper-scan.js";

const made: string[] = [];
after(() => made.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

/** A repository with `file` in its index, git run with none of the caller's GIT_* variables. */
function repository(root: string, name: string, file: string): string {
  const dir = join(root, name);
  const git = (...args: string[]) =>
    spawnSync("git", args, { cwd: dir, env: { PATH: process.env.PATH, HOME: root }, encoding: "utf8" });
  spawnSync("git", ["init", "-q", dir], { env: { PATH: process.env.PATH, HOME: root } });
  writeFileSync(join(dir, file), "x\n");
  assert.equal(git("add", file).status, 0);
  return dir;
}

function indexOf(dir: string): string[] {
  const listed = spawnSync("git", ["ls-files", "-s"], { cwd: dir, env: { PATH: process.env.PATH }, encoding: "utf8" });
  return listed.stdout
    .trim()
    .split("\n")
    .map((line) => `${line.split(" ")[0]} ${line.split("\t")[1]}`);
}

function plantGitlink(dir: string, path: string): void {
  const added = spawnSync(
    "git",
    ["update-index", "--add", "--cacheinfo", `160000,1111111111111111111111111111111111111111,${path}`],
    { cwd: dir, env: { PATH: process.env.PATH }, encoding: "utf8" },
  );
  assert.equal(added.status, 0, added.stderr);
}

describe("the tamper scan's git", () => {
  const root = mkdtempSync(join(tmpdir(), "ralph-tamper-scan-"));
  made.push(root);
  const outer = repository(root, "outer", "outer.txt");
  // As a pre-commit hook of the outer repository hands them down.
  const hookEnv = { ...process.env, GIT_DIR: join(outer, ".git"), GIT_INDEX_FILE: join(outer, ".git", "index") };

  test("under a hook's GIT_DIR and GIT_INDEX_FILE, it finds and removes the gitlink in the work tree's own index", async () => {
    const work = repository(root, "work", "work.txt");
    const saved = { GIT_DIR: process.env.GIT_DIR, GIT_INDEX_FILE: process.env.GIT_INDEX_FILE };
    Object.assign(process.env, { GIT_DIR: hookEnv.GIT_DIR, GIT_INDEX_FILE: hookEnv.GIT_INDEX_FILE });
    try {
      const scan = await watchTamper(work, join(root, "planted-1"), process.env);
      plantGitlink(work, "linked");
      assert.deepEqual(await scan(), ["linked (a gitlink in the index)"]);
    } finally {
      for (const [name, value] of Object.entries(saved))
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
    }
    assert.deepEqual(indexOf(work), ["100644 work.txt"]);
    assert.deepEqual(indexOf(outer), ["100644 outer.txt"]);
  });

  test("control: a git that keeps the hook's variables reads the outer index from inside the work tree", () => {
    const work = repository(root, "work-control", "work.txt");
    const listed = spawnSync("git", ["ls-files"], { cwd: work, env: hookEnv, encoding: "utf8" });
    assert.equal(listed.stdout.trim(), "outer.txt");
  });

  test("a gitlink named as a magic pathspec (`:(glob)w*`) is taken out, and the rest of the index is left alone", async () => {
    const work = repository(root, "work-star", "work.txt");
    const scan = await watchTamper(work, join(root, "planted-2"), process.env);
    plantGitlink(work, ":(glob)w*");
    assert.deepEqual(await scan(), [":(glob)w* (a gitlink in the index)"]);
    assert.deepEqual(indexOf(work), ["100644 work.txt"]);
  });

  test("control: git rm reads such a name as a pattern, removing the rest and keeping the gitlink", () => {
    const work = repository(root, "work-star-control", "work.txt");
    plantGitlink(work, ":(glob)w*");
    spawnSync("git", ["rm", "-q", "--cached", "--", ":(glob)w*"], {
      cwd: work,
      env: { PATH: process.env.PATH },
      encoding: "utf8",
    });
    assert.deepEqual(indexOf(work), ["160000 :(glob)w*"]);
  });

  test("a .git/commondir that is a link to nothing yet is planted too (git follows it once its target appears)", async () => {
    const work = repository(root, "work-link", "work.txt");
    const scan = await watchTamper(work, join(root, "planted-3"), process.env);
    symlinkSync("../later-commondir", join(work, ".git", "commondir"));
    assert.equal(
      existsSync(join(work, ".git", "commondir")),
      false,
      "control: existsSync does not see a dangling link",
    );
    assert.deepEqual(await scan(), [".git/commondir"]);
    assert.equal(readdirSync(join(work, ".git")).includes("commondir"), false);
  });

  test("two planted repositories whose quarantine names look alike are both moved out", async () => {
    const work = repository(root, "work-alike", "work.txt");
    const scan = await watchTamper(work, join(root, "planted-4"), process.env);
    for (const dir of ["a/b", "a_b"]) {
      mkdirSync(join(work, dir, ".git"), { recursive: true });
      writeFileSync(join(work, dir, ".git", "x"), "x");
    }
    assert.deepEqual(await scan(), ["a/b/.git", "a_b/.git"]);
    assert.equal(readdirSync(join(root, "planted-4")).length, 2);
  });
});
