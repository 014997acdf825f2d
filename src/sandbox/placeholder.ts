// Placeholders: what the sandbox keeps read-only must exist to be bound read-only, so a missing path is no
// way in. Where one is missing (a repository without `.git/hooks`, a person without `~/.claude/settings.json`)
// an empty one is made first: an empty directory or file, which means the same as none to git and to the
// agent CLIs. Made here only, for git's paths and the CLIs' alike.
import { lstatSync, mkdirSync, statSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";

/** What to make where the path is missing: a directory, or a file with this content; `private`: 0700 / 0600. */
export type Placeholder =
  { kind: "directory"; private?: boolean } | { kind: "file"; content: string; private?: boolean };

/** Whether something a bind can follow is at `path` (a link that leads nowhere is not). */
function bindable(path: string): boolean {
  try {
    statSync(path);
    return true;
  } catch {
    return false;
  }
}

/**
 * Whether `path` can be bound read-only: it exists, or it was missing and an empty one was made. Nothing that
 * exists is written to or through: a link that leads nowhere stays as it is (false), never followed to create
 * its target wherever it points.
 */
export function ensurePlaceholder(path: string, what: Placeholder): boolean {
  if (lstatSync(path, { throwIfNoEntry: false }) !== undefined) return bindable(path);
  try {
    mkdirSync(dirname(path), { recursive: true, ...(what.private === true ? { mode: 0o700 } : {}) });
    if (what.kind === "directory") mkdirSync(path, what.private === true ? { mode: 0o700 } : {});
    else writeFileSync(path, what.content, { flag: "wx", ...(what.private === true ? { mode: 0o600 } : {}) });
    return true;
  } catch {
    // Made meanwhile by someone else, or a place ralph cannot write (then nothing there is a way in either).
    return bindable(path);
  }
}
