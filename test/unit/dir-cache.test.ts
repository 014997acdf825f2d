// dirCache (src/store/dir-cache.ts): what a listing read from a directory of records replaced whole, kept
// for the next listing only while the directory is unchanged.
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { dirCache } from "../../src/store/dir-cache.js";
import { writeFileAtomic } from "../../src/store/atomic-write.js";

const dirs: string[] = [];
after(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

/** A directory of records and a cache file beside it. */
function records(): { dir: string; cacheFile: string } {
  const top = mkdtempSync(join(tmpdir(), "ralph-dir-cache-"));
  dirs.push(top);
  const dir = join(top, "records");
  mkdirSync(dir);
  for (const name of ["a", "b"]) writeFileSync(join(dir, name), `${name}1`);
  return { dir, cacheFile: join(top, "cache", "records.json") };
}

const isText = (value: unknown): value is string => typeof value === "string";

/** A listing at `now`: each name's value and which names were read from their files. */
function listing(dir: string, cacheFile: string, now: number, names = ["a", "b", "none"]) {
  const cache = dirCache(dir, cacheFile, isText, now);
  const read: string[] = [];
  const values = names.map((name) =>
    cache.get(name, () => {
      read.push(name);
      return existsSync(join(dir, name)) ? readFileSync(join(dir, name), "utf8") : null;
    }),
  );
  cache.save();
  return { values, read };
}

// Later than the directory's last change by more than the settling time: what is read may be kept.
const later = () => Date.now() + 60_000;

describe("dirCache", () => {
  test("a second listing of an unchanged directory reads nothing; its answers, a missing file's too, are the first's", () => {
    const { dir, cacheFile } = records();
    assert.deepEqual(listing(dir, cacheFile, later()), { values: ["a1", "b1", null], read: ["a", "b", "none"] });
    assert.deepEqual(listing(dir, cacheFile, later()), { values: ["a1", "b1", null], read: [] });
    // A name the first listing did not read is read, and kept with the others.
    assert.deepEqual(listing(dir, cacheFile, later(), ["a", "c"]), { values: ["a1", null], read: ["c"] });
    assert.deepEqual(listing(dir, cacheFile, later(), ["a", "b", "c"]).read, []);
  });

  test("a record replaced, added or removed the way ralph does it is read again (and a change in place is not seen: the control)", () => {
    const { dir, cacheFile } = records();
    listing(dir, cacheFile, later());
    // In place, which ralph never does: the directory is unchanged, so the cache answers (it is in use).
    writeFileSync(join(dir, "a"), "a-in-place");
    assert.deepEqual(listing(dir, cacheFile, later()), { values: ["a1", "b1", null], read: [] });
    writeFileAtomic(join(dir, "a"), "a2", 0o600, false);
    assert.deepEqual(listing(dir, cacheFile, later()), { values: ["a2", "b1", null], read: ["a", "b", "none"] });
    writeFileAtomic(join(dir, "none"), "new", 0o600, false);
    assert.deepEqual(listing(dir, cacheFile, later()).values, ["a2", "b1", "new"]);
    rmSync(join(dir, "b"));
    assert.deepEqual(listing(dir, cacheFile, later()).values, ["a2", null, "new"]);
  });

  test("nothing is kept from a directory changed within the settling time: a change in the same clock tick could not be told", () => {
    const { dir, cacheFile } = records();
    assert.deepEqual(listing(dir, cacheFile, Date.now()).values, ["a1", "b1", null]);
    assert.equal(existsSync(cacheFile), false);
    listing(dir, cacheFile, later());
    assert.equal(existsSync(cacheFile), true);
  });

  test("a cache file of another directory, or with an entry the reader refuses, or not JSON, counts for nothing", () => {
    const { dir, cacheFile } = records();
    const other = records();
    listing(other.dir, cacheFile, later());
    assert.deepEqual(listing(dir, cacheFile, later()).read, ["a", "b", "none"], "another directory's");
    const kept = JSON.parse(readFileSync(cacheFile, "utf8")) as { entries: Array<[string, unknown]> };
    assert.deepEqual(listing(dir, cacheFile, later()).read, [], "its own");
    const refused = kept.entries.map(([name, entry]) => [name, name === "b" ? 42 : entry]);
    writeFileSync(cacheFile, JSON.stringify({ ...kept, entries: refused }));
    assert.deepEqual(listing(dir, cacheFile, later()).read, ["a", "b", "none"], "an entry refused");
    writeFileSync(cacheFile, JSON.stringify({ ...kept, entries: Object.fromEntries(kept.entries) }));
    assert.deepEqual(listing(dir, cacheFile, later()).read, ["a", "b", "none"], "entries not a list");
    writeFileSync(cacheFile, JSON.stringify(kept));
    assert.deepEqual(listing(dir, cacheFile, later()).read, [], "its own again");
    writeFileSync(cacheFile, "{");
    assert.deepEqual(listing(dir, cacheFile, later()).values, ["a1", "b1", null], "not JSON");
  });

  test("a cache that cannot be written costs the listing nothing", () => {
    const { dir } = records();
    const blocked = join(dirs[dirs.length - 1] as string, "file");
    writeFileSync(blocked, "");
    assert.deepEqual(listing(dir, join(blocked, "cache.json"), later()).values, ["a1", "b1", null]);
  });
});
