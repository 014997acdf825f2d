// The run's own directory as a sandboxed process sees it: a directory of hard links to the run's files, made
// for each start and bound whole. Binding the files one by one raced: ralph replaces status.json (and others)
// by a rename at any time, and bubblewrap fails its set-up when a file it has just bound is renamed over
// before it remounts it read-only. Nothing renames or removes a view's links while its sandbox lives.
import { linkSync, lstatSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { readRegular } from "../store/regular-file.js";

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
 * each of its regular files but settings.json and the temporary files of a write under way; subdirectories
 * (the `ralph set` requests, planted files) are left out. A file ralph replaces later stays in the view as it
 * was; one appended to (a log) is seen growing. Null when no view can be made: the run directory then shows
 * empty.
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
    try {
      if (lstatSync(join(runDir, name)).isFile()) addToView(join(runDir, name), join(view, name));
    } catch {
      // Gone meanwhile (removed, or a temporary name renamed away): not part of the run any more.
    }
  }
  return view;
}

/**
 * Links `from` into a view as `to`. A file renamed over while it is being linked fails with ENOENT though its
 * name never went away: it is linked again. Where no link can be made (a file system without them, or a file
 * renamed over at every try), the view gets a copy, read without following a link or waiting on a FIFO.
 */
function addToView(from: string, to: string): void {
  for (let tries = 0; tries < 3; tries++) {
    try {
      linkSync(from, to);
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") break;
    }
  }
  try {
    writeFileSync(to, readRegular(from), { mode: 0o600, flag: "wx" });
  } catch {
    // Gone, not a regular file any more, or unreadable: left out of the view.
  }
}

/** Removes a view (only its links: the run's files stay). */
export function removeRunView(view: string): void {
  rmSync(view, { recursive: true, force: true });
}

/** Removes the views of run directory `runDir` that a runner which ended without removing them left. */
export function removeLeftoverViews(runDir: string): void {
  for (const name of names(runDir)) if (name.startsWith(VIEW_PREFIX)) removeRunView(join(runDir, name));
}
