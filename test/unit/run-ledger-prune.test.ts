// A runner records a run before it creates the run's directory, and every run start drops the records of
// run directories that are gone: one runner's start must not drop the record another runner has just made.
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { entryFile, canonical } from "../../src/control/ledger-entry.js";
import { projectLockHolders, readLedgerEntry, recordRunCreated } from "../../src/control/run-ledger.js";

const root = mkdtempSync(join(tmpdir(), "ralph-ledger-prune-"));
after(() => rmSync(root, { recursive: true, force: true }));
const env = { XDG_STATE_HOME: join(root, "state") };
const alive = () => true;

test("a record whose run directory is still being created survives another project's run start; an old one whose directory is gone is dropped", () => {
  const other = join(root, "other");
  mkdirSync(join(other, ".ralph", "runs"), { recursive: true });
  // Recorded, its directory not made yet (its runner is between the two steps).
  const creating = join(root, "a", ".ralph", "runs", "new");
  mkdirSync(join(root, "a", ".ralph", "runs"), { recursive: true });
  recordRunCreated(creating, "new", null, null, env);
  projectLockHolders(other, alive, env);
  assert.notEqual(readLedgerEntry(creating, env), null, "the fresh record is kept");
  // Control: the same record, made two minutes ago, names a directory that is gone: dropped.
  const file = entryFile(canonical(creating), env);
  const entry = JSON.parse(readFileSync(file, "utf8")) as { created_at: string };
  writeFileSync(file, `${JSON.stringify({ ...entry, created_at: new Date(Date.now() - 120_000).toISOString() })}\n`);
  projectLockHolders(other, alive, env);
  assert.equal(readLedgerEntry(creating, env), null, "the old record is dropped");
});
