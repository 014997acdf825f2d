// The sha256 of a file as a commit holds it: what ralph pins when the work tree in front of it is not the
// person's (a task branch an earlier agent committed to), so the pin is the person's file, not the agent's.
import { requireBuiltin } from "../util/require-builtin.js";
import { runGitRaw } from "./run-git.js";

/** sha256 (hex) of regular file `path` (relative to the repository's top) in `commit`, or null when it has none there. */
export async function committedDigest(projectDir: string, commit: string, path: string): Promise<string | null> {
  // A link or a submodule is no regular file: fileDigest, which the run checks against, never follows one either.
  const listed = await runGitRaw(projectDir, ["ls-tree", "-z", commit, "--", path]);
  if (!listed.ok || !/^100(644|755) blob /.test(listed.stdout.toString("utf8"))) return null;
  const blob = await runGitRaw(projectDir, ["cat-file", "blob", `${commit}:${path}`]);
  if (!blob.ok) return null;
  return (requireBuiltin("node:crypto") as typeof import("node:crypto"))
    .createHash("sha256")
    .update(blob.stdout)
    .digest("hex");
}
