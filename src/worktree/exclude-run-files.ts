// Keeps `.ralph/` out of a person's `git add .` in a repository that never ran `ralph init`.
import { appendFileSync, existsSync, mkdirSync, readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { mayBeInRepository } from "./may-be-in-repository.js";
import { runGit } from "./run-git.js";

/**
 * Adds `.ralph/` to the repository's local exclude file (`.git/info/exclude`, never committed) when git
 * would otherwise show it as untracked; returns that file when it added the line, else null (not a
 * repository, already ignored, or the file cannot be written: nothing here may stop a run).
 */
export async function excludeRunFiles(projectDir: string): Promise<string | null> {
  // Outside any repository there is nothing to exclude from: asking git would cost two processes per run start.
  if (!mayBeInRepository(projectDir, process.env)) return null;
  const ignored = await runGit(projectDir, ["check-ignore", "-q", ".ralph/"]);
  // Exit 0: ignored already. Exit 1: not ignored. Anything else (128: not a repository): leave it.
  if (ignored.ok || ignored.code !== 1) return null;
  const found = await runGit(projectDir, ["rev-parse", "--git-path", "info/exclude"]);
  if (!found.ok) return null;
  const file = resolve(projectDir, found.stdout.trim());
  try {
    const current = existsSync(file) ? readFileSync(file, "utf8") : "";
    mkdirSync(dirname(file), { recursive: true });
    appendFileSync(
      file,
      `${current === "" || current.endsWith("\n") ? "" : "\n"}# ralph's run files (added by ralph run)\n.ralph/\n`,
    );
    return file;
  } catch {
    return null;
  }
}
