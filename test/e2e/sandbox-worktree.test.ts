// --sandbox with --worktree: the worktree is the writable work directory (under the read-only .ralph/), the
// person's checkout and the repository's .git stay read-only, git still reads the repository, and ralph
// commits the iteration itself.
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { cleanEnv, RALPH } from "../helpers/cli.js";
import { git, isolateGitConfig, tempRepo } from "../helpers/git-repo.js";
import { within } from "../helpers/wait.js";
import { cleanupAfterTests } from "../fixtures/e2e-cleanup.js";

const cleanup = cleanupAfterTests();
after(isolateGitConfig());

function sandboxMissing(): string | null {
  if (process.platform !== "linux") return "Linux only";
  const result = spawnSync(process.execPath, [RALPH, "doctor", "--json"], {
    env: cleanEnv(),
    encoding: "utf8",
    timeout: 60_000,
  });
  const sandbox = (JSON.parse(result.stdout) as { sandbox?: { ok: boolean; why?: string } }).sandbox;
  return sandbox?.ok ? null : `no sandbox here: ${sandbox?.why ?? "?"}`;
}

// Writes in its work directory, tries the person's checkout and the repository's config, asks git for status.
const AGENT = [
  "echo made > made.txt",
  'echo planted > "$1/planted.txt" 2>/dev/null && echo checkout=written || echo checkout=refused',
  'echo "[core]" >> "$1/.git/config" 2>/dev/null && echo config=written || echo config=refused',
  "git status --short > status.txt 2>&1",
].join("; ");

describe("--sandbox --worktree", { skip: sandboxMissing() ?? false }, () => {
  test("the agent writes its worktree only; git reads the repository; ralph commits the iteration", async () => {
    const repo = tempRepo();
    const config = readFileSync(join(repo, ".git", "config"), "utf8");
    const ralph = cleanup.ralph(
      [
        "run",
        "--sandbox",
        "--worktree",
        "--name",
        "w",
        "-n",
        "1",
        "--agent",
        "command",
        "go",
        "--",
        "bash",
        "-c",
        AGENT,
        "agent",
        repo,
      ],
      repo,
      cleanEnv(),
    );
    const result = await within(ralph.done, 30_000, "ralph's exit");
    assert.equal(result.code, 3, result.stdout + result.stderr);
    const log = readFileSync(join(repo, ".ralph", "runs", "w", "iter-001.log"), "utf8");
    // (Under /tmp, as here, the write lands in the sandbox's private /tmp; elsewhere it is refused: either way not in the checkout.)
    assert.match(log, /config=refused/);
    assert.equal(existsSync(join(repo, "planted.txt")), false);
    assert.equal(readFileSync(join(repo, ".git", "config"), "utf8"), config);
    assert.equal(git(repo, "show", "ralph/w:made.txt"), "made");
    // git inside the sandbox found the repository through the worktree's .git file.
    assert.match(git(repo, "show", "ralph/w:status.txt"), /\?\? made\.txt/);
  });
});
