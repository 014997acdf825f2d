// A git directory of ralph's own that borrows a repository's objects and nothing else: no config, no work tree,
// no attributes, no hooks, no remotes. Git commands that must see only the bytes (a review's diff) or must run
// none of the repository's settings (a push) run in it, with the system and user configuration left out too.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { runGit } from "./run-git.js";

/** The environment of a git command in a fresh directory: no system or user configuration, no system attributes. */
export function freshGitEnv(base: NodeJS.ProcessEnv, keepUserConfig = false): NodeJS.ProcessEnv {
  return { ...base, GIT_CONFIG_NOSYSTEM: "1", GIT_ATTR_NOSYSTEM: "1", ...(keepUserConfig ? {} : { GIT_CONFIG_GLOBAL: "/dev/null" }) };
}

/**
 * Runs `use` with the path of a fresh bare git directory whose object store reads the objects of the
 * repository at `repoDir` (as alternates); the directory is removed afterwards. A repository git cannot open is
 * a failure, as a value.
 */
export async function withFreshGitDir<T>(repoDir: string, env: NodeJS.ProcessEnv, use: (gitDir: string) => Promise<T>): Promise<T | { ok: false; message: string }> {
  const common = await runGit(repoDir, ["rev-parse", "--git-common-dir"], env);
  if (!common.ok) return { ok: false, message: `not a git repository: ${repoDir} (${common.stderr.split("\n")[0] ?? ""})` };
  const objects = join(resolve(repoDir, common.stdout.trim()), "objects");
  const scratch = mkdtempSync(join(tmpdir(), "ralph-git-"));
  try {
    const gitDir = join(scratch, "git");
    for (const dir of ["objects/info", "objects/pack", "refs/heads", "refs/tags"]) mkdirSync(join(gitDir, dir), { recursive: true, mode: 0o700 });
    writeFileSync(join(gitDir, "HEAD"), "ref: refs/heads/ralph\n");
    writeFileSync(join(gitDir, "config"), "[core]\n\trepositoryformatversion = 0\n\tbare = true\n");
    writeFileSync(join(gitDir, "objects", "info", "alternates"), `${objects}\n`);
    return await use(gitDir);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}
