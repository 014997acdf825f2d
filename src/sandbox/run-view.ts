// The run's own directory as a sandboxed process sees it: a directory of hard links to the run's files, made
// for each start and bound whole. Binding the files one by one raced: ralph replaces status.json (and others)
// by a rename at any time, and bubblewrap fails its set-up when a file it has just bound is renamed over
// before it remounts it read-only. Nothing renames or removes a view's links while its sandbox lives.
import { copyFileSync, linkSync, lstatSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";

/** The names views start with, in the run directory they show. */
const VIEW_PREFIX = ".sandbox-view-";

/** Files of a run directory no sandboxed process sees: its settings name webhook URLs and notification commands. */
const RUN_SECRETS = new Set(["settings.json"]);

function names(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

/**
 * A view of run directory `runDir` (its real path): a fresh 0700 directory inside it holding a hard link to
 * each of its regular files but settings.json and the temporary files of a write under way (a copy where
 * no link can be made: a file system without them, or a file being renamed over). Its subdirectories (the `ralph set` requests, planted files) are left
 * out. A file replaced by ralph later stays as it was in the view; one appended to (the logs) is seen
 * growing. Null when the view cannot be made: the sandbox then shows an empty run directory.
 */
export function makeRunView(runDir: string): string | null {
  let view: string;
  try {
    view = mkdtempSync(join(runDir, VIEW_PREFIX));
  } catch {
    return null;
  }
  for (const name of names(runDir)) {
    if (RUN_SECRETS.has(name) || name.endsWith(".tmp") || name.startsWith(VIEW_PREFIX)) continue;
    const from = join(runDir, name);
    try {
      if (!lstatSync(from).isFile()) continue;
    } catch {
      continue; // Gone meanwhile (removed, or a temporary name renamed away): not part of the run any more.
    }
    try {
      linkSync(from, join(view, name));
    } catch {
      // A file renamed over while it is linked fails with ENOENT though its name never went away; a copy
      // opens whichever file the name holds. Gone for the copy too: no longer part of the run.
      try {
        copyFileSync(from, join(view, name));
      } catch {
        // Unreadable or gone: left out of the view.
      }
    }
  }
  return view;
}

/** Removes a view (only its links: the run's files stay). */
export function removeRunView(view: string): void {
  rmSync(view, { recursive: true, force: true });
}

/** Removes the views of run directory `runDir` that a runner which ended without removing them left. */
export function removeLeftoverViews(runDir: string): void {
  for (const name of names(runDir)) if (name.startsWith(VIEW_PREFIX)) removeRunView(join(runDir, name));
}
