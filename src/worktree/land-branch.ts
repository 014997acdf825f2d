// The git steps of `ralph land`: is the person's checkout clean, merge a run's branch into it (or nothing
// at all), push a run's branch to a remote. Repository hooks never run: the agent could have written them.
import { EVERYTHING_BUT_RALPH } from "./worktree-location.js";
import { freshGitEnv, withFreshGitDir } from "./fresh-git-dir.js";
import { pushConfigArgs } from "./inert-git.js";
import { runGit, runGitRaw } from "./run-git.js";
import type { GitStep } from "./integration-git.js";

const NO_HOOKS = ["-c", "core.hooksPath=/dev/null"];

/** The tracked changes (staged or not) in the checkout at `dir`, as porcelain lines; ralph's own files aside. */
export async function trackedChanges(dir: string): Promise<GitStep<{ changes: string[] }>> {
  const status = await runGit(dir, ["status", "--porcelain=v1", "--untracked-files=no", "--", ...EVERYTHING_BUT_RALPH]);
  if (!status.ok) return { ok: false, message: `git status: ${status.stderr}` };
  return { ok: true, changes: status.stdout.split("\n").filter((line) => line !== "") };
}

/**
 * Merges `branch` into the branch checked out at `dir` with a merge commit. A merge that conflicts (or fails
 * otherwise) is aborted: the checkout is left exactly as it was, and the conflicted paths are named.
 */
export async function mergeIntoCheckout(
  dir: string,
  branch: string,
  message: string,
): Promise<GitStep<{ commit: string }> | { ok: false; message: string; conflicts: string[] }> {
  const merged = await runGit(dir, [
    ...NO_HOOKS,
    "merge",
    "--no-ff",
    "--no-edit",
    "--quiet",
    "-m",
    message,
    `refs/heads/${branch}`,
  ]);
  if (!merged.ok) {
    const unmerged = await runGit(dir, ["diff", "--name-only", "--diff-filter=U", "-z"]);
    const conflicts = unmerged.ok ? [...new Set(unmerged.stdout.split("\0").filter((path) => path !== ""))] : [];
    if ((await runGit(dir, ["rev-parse", "-q", "--verify", "MERGE_HEAD"])).ok)
      await runGit(dir, [...NO_HOOKS, "merge", "--abort"]);
    return { ok: false, message: merged.stderr.split("\n")[0] ?? "git merge failed", conflicts };
  }
  const head = await runGit(dir, ["rev-parse", "HEAD"]);
  return head.ok ? { ok: true, commit: head.stdout.trim() } : { ok: false, message: head.stderr };
}

// The only transports a push may use; `ext::` and every other one that runs a program are refused.
const ALLOWED_PROTOCOLS = "https:ssh:git:file";
// A push runs the person's ssh and credential helpers (their user configuration), never a repository's hooks or monitor.
const PUSH_SETTINGS = pushConfigArgs();

/** The URL of each remote configured in the repository at `dir` (its `remote.NAME.url`), as read now. */
export async function remoteUrls(dir: string): Promise<Record<string, string>> {
  const listed = await runGit(dir, ["config", "-z", "--get-regexp", "^remote\\..*\\.url$"]);
  const urls: Record<string, string> = {};
  if (!listed.ok) return urls;
  for (const entry of listed.stdout.split("\0")) {
    const [key, url] = [entry.slice(0, entry.indexOf("\n")), entry.slice(entry.indexOf("\n") + 1)];
    const name = key.slice("remote.".length, -".url".length);
    if (name !== "" && url !== "" && !(name in urls)) urls[name] = url;
  }
  return urls;
}

/**
 * Pushes local `branch` of the repository at `dir` to `url` as branch `destination` (never forced). The push
 * runs in a git directory of ralph's own that borrows only the repository's objects: no `remote.*`, `url.*`,
 * `pushurl`, `receivepack`, `credential.*` or `core.sshCommand` the repository sets applies, and only the https,
 * ssh, git and file transports are allowed.
 */
export async function pushBranch(
  dir: string,
  url: string,
  branch: string,
  destination: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<GitStep<object>> {
  const tip = await runGit(dir, ["rev-parse", "--verify", "-q", `refs/heads/${branch}^{commit}`]);
  if (!tip.ok) return { ok: false, message: `no branch ${branch} to push` };
  const pushed = await withFreshGitDir(dir, env, (gitDir) =>
    runGitRaw(
      gitDir,
      [`--git-dir=${gitDir}`, "push", "--quiet", "--", url, `${tip.stdout.trim()}:refs/heads/${destination}`],
      {
        env: { ...freshGitEnv(env, true), GIT_ALLOW_PROTOCOL: ALLOWED_PROTOCOLS },
        configArgs: PUSH_SETTINGS,
        timeoutMs: 600_000,
      },
    ),
  );
  if (pushed.ok) return { ok: true };
  const why =
    "message" in pushed
      ? pushed.message
      : (pushed.stderr
          .split("\n")
          .filter((line) => line !== "")
          .slice(-1)[0] ?? "failed");
  return { ok: false, message: `git push ${url}: ${why}` };
}
