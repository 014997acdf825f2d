// A fingerprint of the project's progress (git HEAD, working tree, task list) for stall detection.
import { createHash, type Hash } from "node:crypto";
import { createReadStream, existsSync, promises as fs } from "node:fs";
import { join, resolve } from "node:path";
import { mayBeInRepository } from "../worktree/may-be-in-repository.js";
import { gitSession, type RawGitResult } from "../worktree/run-git.js";

/** The project's progress at one moment; two equal fingerprints mean no progress in between. */
export type Fingerprint =
  { ok: true; head: string; tree: string; tasks: string | null } | { ok: false; message: string };

// The whole repository, minus ralph's own run files wherever a .ralph directory is.
const PATHSPEC = ["--", ":(top)", ":(top,glob,exclude)**/.ralph/**"];
// Untracked files larger than this are fingerprinted by size and mtime instead of read in full.
const CONTENT_HASH_LIMIT = 1024 * 1024;
const HEAD_WHEN_NO_COMMIT = "none";

/**
 * Takes the fingerprint of the git work tree containing `cwd`; `tasksFile` is relative to `cwd`. Aborting
 * `signal` ends the git command under way (the fingerprint is then not ok).
 */
export async function takeFingerprint(
  cwd: string,
  env: NodeJS.ProcessEnv,
  tasksFile?: string,
  signal?: AbortSignal,
): Promise<Fingerprint> {
  // Outside any repository, say so without starting git: two git processes an iteration were most of the loop's cost.
  if (!mayBeInRepository(cwd, env))
    return { ok: false, message: `${cwd} is not in a git repository (stall detection needs git)` };
  const session = await gitSession(cwd, { env, signal, noOptionalLocks: true });
  const git = (args: string[]): Promise<RawGitResult> => session(args);
  const gitInto = (args: string[], hash: Hash): Promise<RawGitResult> => session(args, (chunk) => hash.update(chunk));
  const top = await git(["rev-parse", "--show-toplevel"]);
  if (!top.ok) return { ok: false, message: unavailable(cwd, top) };
  const root = top.stdout.toString("utf8").trim();
  const head = await git(["rev-parse", "--verify", "-q", "HEAD"]);
  const status = await git(["status", "--porcelain=v1", "-z", "--untracked-files=all", ...PATHSPEC]);
  if (!status.ok) return { ok: false, message: `git status failed in ${cwd}: ${status.stderr || status.code}` };
  const tree = createHash("sha256");
  tree.update(status.stdout);
  // Staged and unstaged changes, so an edit to an already modified file is seen too.
  for (const args of [["diff", "--cached"], ["diff"]]) {
    tree.update(`\0${args.join(" ")}\0`);
    const diff = await gitInto(
      [...args, "--binary", "--no-ext-diff", "--no-textconv", "--no-color", ...PATHSPEC],
      tree,
    );
    if (!diff.ok) return { ok: false, message: `git ${args.join(" ")} failed in ${cwd}: ${diff.stderr || diff.code}` };
  }
  for (const digest of await hashUntracked(root, untrackedPaths(status.stdout))) tree.update(`\0${digest}`);
  return {
    ok: true,
    head: head.ok ? head.stdout.toString("utf8").trim() : HEAD_WHEN_NO_COMMIT,
    tree: tree.digest("hex"),
    tasks: tasksFile === undefined ? null : await hashFile(resolve(cwd, tasksFile)),
  };
}

/** What changed between two fingerprints, or null when nothing did (no progress). */
export function describeChange(before: Fingerprint, after: Fingerprint): string | null {
  if (!before.ok || !after.ok) {
    if (!before.ok && !after.ok) return null;
    return after.ok ? "git became available" : `git became unavailable: ${after.message}`;
  }
  const changes: string[] = [];
  if (before.head !== after.head) changes.push(`HEAD moved ${short(before.head)} → ${short(after.head)}`);
  if (before.tree !== after.tree) changes.push("working tree changed");
  if (before.tasks !== after.tasks) changes.push("task list changed");
  return changes.length > 0 ? changes.join("; ") : null;
}

function short(head: string): string {
  return head === HEAD_WHEN_NO_COMMIT ? "(no commit)" : head.slice(0, 7);
}

function unavailable(cwd: string, result: { code: number | string | null; stderr: string }): string {
  if (result.code === "ENOENT") {
    return existsSync(cwd) ? "git is not installed (stall detection needs git)" : `${cwd} does not exist`;
  }
  if (/not a git repository/i.test(result.stderr))
    return `${cwd} is not in a git repository (stall detection needs git)`;
  const reason = result.stderr.split("\n")[0] || `exit ${String(result.code)}`;
  return `git cannot read ${cwd}: ${reason} (stall detection needs git)`;
}

/** The paths of `??` entries in `git status --porcelain=v1 -z` output, relative to the top level. */
function untrackedPaths(status: Buffer): string[] {
  const fields = status.toString("utf8").split("\0");
  const paths: string[] = [];
  for (let i = 0; i < fields.length; i++) {
    const entry = fields[i] ?? "";
    if (entry.length < 4) continue;
    const xy = entry.slice(0, 2);
    if (xy === "??") paths.push(entry.slice(3));
    // A rename or copy is followed by a field holding the original path.
    if (xy.includes("R") || xy.includes("C")) i += 1;
  }
  return paths;
}

async function hashUntracked(root: string, paths: string[]): Promise<string[]> {
  const digests: string[] = [];
  const batch = 16;
  for (let i = 0; i < paths.length; i += batch) {
    const slice = paths.slice(i, i + batch);
    digests.push(
      ...(await Promise.all(slice.map(async (path) => `${path}\0${await describeEntry(join(root, path))}`))),
    );
  }
  return digests;
}

async function describeEntry(path: string): Promise<string> {
  try {
    const info = await fs.lstat(path);
    if (info.isSymbolicLink()) return `link:${await fs.readlink(path)}`;
    if (!info.isFile()) return "other";
    if (info.size > CONTENT_HASH_LIMIT) return `large:${info.size}:${info.mtimeMs}`;
    return hashFile(path);
  } catch (error) {
    return `missing:${(error as NodeJS.ErrnoException).code ?? "?"}`;
  }
}

/** The sha256 of a file's contents; an unreadable file gets a marker naming why, so a change still shows. */
async function hashFile(path: string): Promise<string> {
  return new Promise((done) => {
    const hash = createHash("sha256");
    createReadStream(path)
      .on("data", (chunk) => hash.update(chunk))
      .on("error", (error: NodeJS.ErrnoException) => done(`unreadable:${error.code ?? "?"}`))
      .on("end", () => done(hash.digest("hex")));
  });
}
