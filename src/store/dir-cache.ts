// What a listing read from the records of one directory, kept for the next listing in a cache file of its
// own. The directory's records are only ever replaced whole (written beside, renamed over, or removed; never
// written in place), and each of those changes the directory's modification and change times: while the
// directory's identity (device, inode, both times to the nanosecond) is what it was, so is every record.
import { mkdirSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname } from "node:path";
import { writeFileAtomic } from "./atomic-write.js";

/**
 * A directory changed this recently may change again within the same tick of the file system's clock and
 * keep its times: what was read from it then is not kept.
 */
const SETTLE_MS = 2000;

/** What a listing read from one directory, by a key of its choosing (a run id); `save` keeps it for the next listing. */
export interface DirCache<T> {
  /** What was read for `key`: the cache's while the directory is unchanged, else `read(key)`'s (null: none). */
  get(key: string, read: (key: string) => T | null): T | null;
  /** Keeps what was read in the cache file (atomically), when anything new was; a failure keeps nothing. */
  save(): void;
}

interface CacheFile<T> {
  version: 1;
  dir: string;
  identity: string;
  /** Each key with what was read for it (null: nothing, no such record). */
  entries: Array<[string, T | null]>;
}

/** The directory's identity now, or null when it cannot be told or is too recently changed to be relied on. */
function identityOf(dir: string, now: number): string | null {
  try {
    const stat = statSync(dir, { bigint: true });
    if (now - Number(stat.ctimeMs) < SETTLE_MS || now - Number(stat.mtimeMs) < SETTLE_MS) return null;
    return `${stat.dev}:${stat.ino}:${stat.mtimeNs}:${stat.ctimeNs}`;
  } catch {
    return null;
  }
}

/**
 * The cache of directory `dir`'s records, kept in `cacheFile`: a cache file of another directory, another
 * identity, or whose entries `valid` refuses counts for nothing.
 */
export function dirCache<T>(
  dir: string,
  cacheFile: string,
  valid: (entry: unknown) => entry is T,
  now: number = Date.now(),
): DirCache<T> {
  // Taken before any record is read: a change while they are read leaves the cache kept under the old identity.
  const identity = identityOf(dir, now);
  const entries = new Map<string, T | null>(identity === null ? [] : kept(cacheFile, dir, identity, valid));
  let added = false;
  return {
    get(key, read) {
      const known = entries.get(key);
      if (known !== undefined) return known;
      const entry = read(key);
      entries.set(key, entry);
      added = true;
      return entry;
    },
    save() {
      if (!added || identity === null) return;
      const file: CacheFile<T> = { version: 1, dir, identity, entries: [...entries] };
      try {
        mkdirSync(dirname(cacheFile), { recursive: true, mode: 0o700 });
        writeFileAtomic(cacheFile, `${JSON.stringify(file)}\n`, 0o600, false);
      } catch {
        // A state directory that cannot be written: the next listing reads the records again.
      }
    },
  };
}

/** The entries of the cache file when it is this directory's at this identity and every entry is valid. */
function kept<T>(
  cacheFile: string,
  dir: string,
  identity: string,
  valid: (entry: unknown) => entry is T,
): Array<[string, T | null]> {
  let file: Partial<CacheFile<unknown>>;
  try {
    file = JSON.parse(readFileSync(cacheFile, "utf8")) as Partial<CacheFile<unknown>>;
  } catch {
    return [];
  }
  if (file?.version !== 1 || file.dir !== dir || file.identity !== identity || !Array.isArray(file.entries)) return [];
  for (const pair of file.entries)
    if (!Array.isArray(pair) || typeof pair[0] !== "string" || (pair[1] !== null && !valid(pair[1]))) return [];
  return file.entries as Array<[string, T | null]>;
}

/**
 * Whether directory `dir` holds a file of a name, from one listing of it taken when first asked (so a
 * listing whose records are all cached lists nothing): a record that is not there costs no failed open.
 * True for every name when the directory cannot be listed.
 */
export function listedIn(dir: string): (name: string) => boolean {
  let names: Set<string> | null | undefined;
  return (name) => {
    if (names === undefined) {
      try {
        names = new Set(readdirSync(dir));
      } catch {
        names = null;
      }
    }
    return names === null || names.has(name);
  };
}
