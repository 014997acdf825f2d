// Reading the runner's record of a run (run-ledger.ts describes the ledger and writes it), apart from the
// writing side so that the read-only commands (`ralph status`, `ralph list`) load nothing they do not use:
// the record's file name is a sha256 of a path, taken without Node's crypto (src/util/sha256.ts).
import { readFileSync, realpathSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { dirCache, listedIn } from "../store/dir-cache.js";
import { requireBuiltin } from "../util/require-builtin.js";
import { sha256Hex } from "../util/sha256.js";
import { sha256ForMany } from "../util/sha256-many.js";
import type { PinTable } from "../store/pinned-program.js";

/** The runner driving a run now. */
export interface LedgerRunner {
  pid: number;
  pid_start: string | null;
  hostname: string;
  /** It holds the project lock (a run without --name). */
  project_lock: boolean;
}

/** What the runner recorded about one run. */
export interface LedgerEntry {
  version: 1;
  run_id: string;
  run_dir: string;
  created_at: string;
  /** sha256 of settings.json as ralph last wrote it; null when the run has none (hook mode). */
  settings_sha256: string | null;
  /** sha256 of status.json as the last runner left it at its end; null while one runs, or after a crash. */
  status_sha256: string | null;
  runner: LedgerRunner | null;
  /** The URL of each remote of the project when the run started (before any agent ran): what `land --push NAME` pushes to. */
  remotes?: Record<string, string>;
  /**
   * The scripts the person's commands run, pinned when the run was created (before any agent ran): review
   * commands' under the work tree, notification commands' under the project. Never taken again.
   */
  pins?: { review: PinTable; notify: PinTable };
  /** The tree a run's reviews diff against, taken before its first reviewed iteration: what `ralph continue` goes on from. */
  review_base?: string;
}

/** The directory of the records (0700), from `env`. */
export function ledgerDir(env: NodeJS.ProcessEnv = process.env): string {
  const base =
    env.XDG_STATE_HOME && env.XDG_STATE_HOME.startsWith("/")
      ? env.XDG_STATE_HOME
      : join(env.HOME || (requireBuiltin("node:os") as typeof import("node:os")).homedir(), ".local", "state");
  return join(base, "ralph", "runs");
}

/** A run directory's canonical path: its parent's with links resolved (the same before and after it exists). */
export function canonical(runDir: string): string {
  const full = resolve(runDir);
  try {
    return join(realpathSync(dirname(full)), basename(full));
  } catch {
    return full;
  }
}

/** The record's file for the run directory whose canonical path is `dir`. */
export function entryFile(dir: string, env: NodeJS.ProcessEnv): string {
  return join(ledgerDir(env), `${sha256Hex(dir).slice(0, 40)}.json`);
}

/** A record's text as a record, or null when it is not one. */
export function parseEntry(text: string): LedgerEntry | null {
  try {
    const value = JSON.parse(text) as LedgerEntry;
    return value && value.version === 1 && typeof value.run_dir === "string" && typeof value.run_id === "string"
      ? value
      : null;
  } catch {
    return null;
  }
}

/** The record of run directory `runDir`, or null when ralph did not create it (or the record is unreadable). */
export function readLedgerEntry(runDir: string, env: NodeJS.ProcessEnv = process.env): LedgerEntry | null {
  const dir = canonical(runDir);
  return readEntryOf(dir, entryFile(dir, env));
}

function readEntryOf(dir: string, file: string): LedgerEntry | null {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch {
    return null;
  }
  const entry = parseEntry(text);
  return entry && entry.run_dir === dir ? entry : null;
}

/** What a listing needs of a record: that there is one, and which runner drives the run. */
export type ListedEntry = Pick<LedgerEntry, "runner">;

/** Reads many runs' records (a listing); `save` keeps what was read for the next listing. */
export interface LedgerReader {
  entry(id: string): ListedEntry | null;
  save(): void;
}

function isListedEntry(value: unknown): value is ListedEntry {
  const entry = value as Partial<ListedEntry>;
  return (
    typeof entry === "object" &&
    entry !== null &&
    (entry.runner === null || (typeof entry.runner === "object" && typeof entry.runner?.pid === "number"))
  );
}

/**
 * readLedgerEntry for many runs of one runs directory (a listing): the directory's links are resolved once,
 * not once a run; what the last listing of these runs read is taken from its cache (by run id, so a run it
 * read needs no digest of its name either) while the records' directory is unchanged; and the records are
 * listed once, so a run with none (a foreign one) costs no failed open. For more than a few runs, the names
 * are hashed by node:crypto (the plain-JavaScript digest is quicker to load, slower per call).
 */
export function ledgerReader(
  runsDir: string,
  count: number,
  env: NodeJS.ProcessEnv = process.env,
  now: number = Date.now(),
): LedgerReader {
  let parent: string;
  try {
    parent = realpathSync(resolve(runsDir));
  } catch {
    parent = resolve(runsDir);
  }
  const records = ledgerDir(env);
  const cacheFile = join(dirname(records), "cache", "runs", `${sha256Hex(parent).slice(0, 40)}.json`);
  const cache = dirCache(records, cacheFile, isListedEntry, now);
  const listed = listedIn(records);
  let hash: ((text: string) => string) | undefined;
  return {
    entry: (id) =>
      cache.get(id, () => {
        const dir = join(parent, id);
        const name = `${(hash ??= sha256ForMany(count))(dir).slice(0, 40)}.json`;
        const read = listed(name) ? readEntryOf(dir, join(records, name)) : null;
        return read === null ? null : { runner: read.runner };
      }),
    save: () => cache.save(),
  };
}
