// Snapshots of the work tree as git tree objects, taken through an index of ralph's own (the repository's
// index, HEAD and refs are never touched), and the diff between two of them: what one iteration changed.
import { copyFileSync, lstatSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { withFreshGitDir, freshGitEnv } from "./fresh-git-dir.js";
import { gitSession, runGitRaw, type GitSessionRun } from "./run-git.js";

/** A snapshot: the tree object of the work tree's files (tracked and untracked, not ignored), or why there is none. */
export type TreeSnapshot = { ok: true; tree: string } | { ok: false; message: string };

// Everything in the work tree but ralph's own run files, wherever a .ralph directory is.
const PATHSPEC = ["--", ":(top)", ":(top,glob,exclude)**/.ralph/**"];

// What the repository's config could make git trust instead of the files: stat data without ctime or inode,
// an untracked cache, sparse patterns. The files themselves decide.
const TRUST_NOTHING = [
  "-c",
  "core.trustctime=true",
  "-c",
  "core.checkStat=default",
  "-c",
  "core.untrackedCache=false",
  "-c",
  "core.sparseCheckout=false",
];

/** Whether an entry of the index is flagged skip-worktree (`S`) or assume-unchanged (a lower-case tag), or git cannot say. */
async function flagged(git: GitSessionRun): Promise<boolean> {
  const listed = await git(["ls-files", "-v", "-z"]);
  if (!listed.ok) return true;
  return listed.stdout
    .toString("utf8")
    .split("\0")
    .some((entry) => entry.startsWith("S ") || /^[a-z] /.test(entry));
}

/** Writes the work tree containing `cwd` as a tree object; aborting `signal` ends the git command under way. */
export async function snapshotTree(cwd: string, env: NodeJS.ProcessEnv, signal?: AbortSignal): Promise<TreeSnapshot> {
  let scratch: string;
  try {
    scratch = mkdtempSync(join(tmpdir(), "ralph-snapshot-"));
  } catch (error) {
    return {
      ok: false,
      message: `no scratch directory for a snapshot of ${cwd}: ${(error as NodeJS.ErrnoException).code ?? "error"}`,
    };
  }
  const index = join(scratch, "index");
  try {
    const plain = await gitSession(cwd, { env, signal, noOptionalLocks: true });
    const where = await plain(["rev-parse", "--git-path", "index"]);
    if (!where.ok)
      return { ok: false, message: `no git snapshot of ${cwd}: ${where.stderr.split("\n")[0] || where.code}` };
    // The repository's index, copied, makes git re-read only the files that changed since it was written.
    const own = resolve(cwd, where.stdout.toString("utf8").trim());
    let copied = false;
    try {
      if (lstatSync(own).isFile()) {
        copyFileSync(own, index);
        copied = true;
      }
    } catch {
      // No index yet (a fresh repository): the snapshot starts from HEAD, or from nothing.
    }
    const git = await gitSession(cwd, { env, signal, indexFile: index });
    // The copy is the agent's: an entry it flagged skip-worktree or assume-unchanged would hide that file's change.
    if (copied && (await flagged(git))) {
      rmSync(index, { force: true });
      copied = false;
    }
    if (!copied) await git([...TRUST_NOTHING, "read-tree", "HEAD"]);
    const added = await git([...TRUST_NOTHING, "add", "-A", ...PATHSPEC]);
    if (!added.ok)
      return {
        ok: false,
        message: `git add (into ralph's own index) failed in ${cwd}: ${added.stderr.split("\n")[0] || added.code}`,
      };
    const tree = await git(["write-tree"]);
    if (!tree.ok)
      return { ok: false, message: `git write-tree failed in ${cwd}: ${tree.stderr.split("\n")[0] || tree.code}` };
    return { ok: true, tree: tree.stdout.toString("utf8").trim() };
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

/** The diff from tree `from` to tree `to` (a stat, then the patch), cut after `capBytes`. */
export async function treeDiff(
  cwd: string,
  env: NodeJS.ProcessEnv,
  from: string,
  to: string,
  capBytes: number,
  signal?: AbortSignal,
): Promise<{ ok: true; text: string; truncated: boolean } | { ok: false; message: string }> {
  const chunks: Buffer[] = [];
  let size = 0;
  const enough = new AbortController();
  const onAbort = (): void => enough.abort();
  signal?.addEventListener("abort", onAbort, { once: true });
  // In a git directory of ralph's own: no attribute of the tree, the repository or the system (`-diff`, a
  // textconv, a driver) changes what is shown. A file is binary only when its bytes are, shown with its size.
  const result = await withFreshGitDir(cwd, env, (gitDir) =>
    runGitRaw(
      gitDir,
      [
        `--git-dir=${gitDir}`,
        "-c",
        "core.attributesFile=/dev/null",
        "diff",
        "--no-ext-diff",
        "--no-textconv",
        "--no-color",
        "--stat",
        "--patch",
        from,
        to,
      ],
      {
        env: freshGitEnv(env),
        signal: enough.signal,
        onStdout: (chunk) => {
          if (size >= capBytes) return;
          chunks.push(chunk);
          size += chunk.length;
          if (size >= capBytes) enough.abort();
        },
      },
    ),
  );
  signal?.removeEventListener("abort", onAbort);
  const truncated = size >= capBytes;
  if (!result.ok && !truncated)
    return {
      ok: false,
      message:
        "message" in result
          ? result.message
          : `git diff failed in ${cwd}: ${result.stderr.split("\n")[0] || result.code}`,
    };
  const text = Buffer.concat(chunks).subarray(0, capBytes).toString("utf8");
  return { ok: true, text: text.replace(/\n$/, ""), truncated };
}

/** The tree of commit `commit` (a run's base), or null when git cannot name it. */
export async function treeOfCommit(cwd: string, env: NodeJS.ProcessEnv, commit: string): Promise<TreeSnapshot | null> {
  if (!/^[0-9a-f]{40}(?:[0-9a-f]{24})?$/.test(commit)) return null;
  const result = await runGitRaw(cwd, ["rev-parse", "--verify", "-q", `${commit}^{tree}`], { env });
  return result.ok ? { ok: true, tree: result.stdout.toString("utf8").trim() } : null;
}

/** Whether `id` names a tree object of the repository at `cwd` (a tree id read back from a run's status). */
export async function isTree(cwd: string, env: NodeJS.ProcessEnv, id: string): Promise<boolean> {
  if (!/^[0-9a-f]{40}(?:[0-9a-f]{24})?$/.test(id)) return false;
  const result = await runGitRaw(cwd, ["cat-file", "-t", id], { env });
  return result.ok && result.stdout.toString("utf8").trim() === "tree";
}

/** The paths that differ between two trees (at most `limit` of them), or null when git cannot say. */
export async function changedPaths(
  cwd: string,
  env: NodeJS.ProcessEnv,
  from: string,
  to: string,
  limit = 10,
): Promise<string[] | null> {
  const result = await runGitRaw(cwd, ["diff", "--no-ext-diff", "--no-renames", "--name-only", "-z", from, to], {
    env,
  });
  if (!result.ok) return null;
  return result.stdout
    .toString("utf8")
    .split("\0")
    .filter((path) => path !== "")
    .slice(0, limit);
}
