// A git directory of ralph's own that borrows a repository's objects and nothing else: no config, no work tree,
// no attributes, no hooks, no remotes. Git commands that must see only the bytes (a review's diff) or must run
// none of the repository's settings (a push) run in it, with the system and user configuration left out too.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { runGit } from "./run-git.js";

/** The environment of a git command in a fresh directory: no system or user configuration, no system attributes. */
export function freshGitEnv(base: NodeJS.ProcessEnv, keepUserConfig = false): NodeJS.ProcessEnv {
  return {
    ...base,
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_ATTR_NOSYSTEM: "1",
    ...(keepUserConfig ? {} : { GIT_CONFIG_GLOBAL: "/dev/null" }),
  };
}

/**
 * Runs `use` with the path of a fresh bare git directory whose object store reads the objects of the
 * repository at `repoDir` (as alternates); the directory is removed afterwards. A repository git cannot open is
 * a failure, as a value.
 */
export async function withFreshGitDir<T>(
  repoDir: string,
  env: NodeJS.ProcessEnv,
  use: (gitDir: string) => Promise<T>,
): Promise<T | { ok: false; message: string }> {
  const found = await runGit(repoDir, ["rev-parse", "--git-common-dir", "--show-object-format"], env);
  const [common, format] = found.ok ? found.stdout.split("\n") : [];
  if (!found.ok || !common || !format)
    return {
      ok: false,
      message: `not a git repository: ${repoDir} (${found.ok ? "no object format" : (found.stderr.split("\n")[0] ?? "")})`,
    };
  const objects = join(resolve(repoDir, common), "objects");
  const scratch = mkdtempSync(join(tmpdir(), "ralph-git-"));
  try {
    const gitDir = join(scratch, "git");
    // git writes the directory for the repository's object format (a sha256 one needs its extension set);
    // no template (no sample hooks), and no configuration of the user's or the system's to read.
    const made = await runGit(
      scratch,
      ["init", "--quiet", "--bare", "--template=", `--object-format=${format}`, gitDir],
      freshGitEnv(env),
    );
    if (!made.ok)
      return {
        ok: false,
        message: `git init of a scratch git directory failed: ${made.stderr.split("\n")[0] ?? made.code}`,
      };
    writeFileSync(join(gitDir, "objects", "info", "alternates"), `${objects}\n`);
    return await use(gitDir);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}
