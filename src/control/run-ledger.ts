// The runner's own record of each run it created, kept outside the project (in the user's state directory,
// `$XDG_STATE_HOME/ralph/runs` or `~/.local/state/ralph/runs`): where the run directory is, digests of the
// settings.json and final status.json it wrote, and which runner drives it now. An agent works in the
// project: deleting the locks or status.json, editing settings.json or planting a run directory there
// changes nothing here. (It runs as the same user, so it could write here too; `--sandbox` hides it.)
import { mkdirSync, readdirSync, readFileSync, unlinkSync } from "node:fs";
import { hostname } from "node:os";
import { join, sep } from "node:path";
import { writeFileAtomic } from "../store/atomic-write.js";
import { requireBuiltin } from "../util/require-builtin.js";
import {
  canonical,
  entryFile,
  ledgerDir,
  parseEntry,
  readLedgerEntry,
  type LedgerEntry,
  type LedgerRunner,
} from "./ledger-entry.js";
import type { RunnerAlive } from "./lock-file.js";

export { ledgerDir, readLedgerEntry, type LedgerEntry, type LedgerRunner } from "./ledger-entry.js";
export { fileDigest } from "../store/file-digest.js";

/** How long a record may name a run directory that does not exist yet (another runner creating it now). */
const CREATING_MS = 60_000;

function writeEntry(entry: LedgerEntry, env: NodeJS.ProcessEnv): void {
  mkdirSync(ledgerDir(env), { recursive: true, mode: 0o700 });
  writeFileAtomic(entryFile(canonical(entry.run_dir), env), `${JSON.stringify(entry)}\n`, 0o600, false);
}

/**
 * Records a run directory ralph is about to create (before it exists, so that a crash in between leaves a
 * record without a directory, which is dropped, never a directory without a record), with the settings.json
 * text it will hold (null: none, as in hook mode), its runner, and what it found before any agent ran (the
 * project's remotes, the pinned scripts): all in one write.
 */
export function recordRunCreated(
  runDir: string,
  runId: string,
  settingsText: string | null,
  runner: LedgerRunner | null,
  env: NodeJS.ProcessEnv = process.env,
  found: Pick<LedgerEntry, "remotes" | "pins"> = {},
): void {
  // A run that already exists keeps its record (creating it again fails: a --name already taken).
  if (readLedgerEntry(runDir, env) !== null && existsDir(canonical(runDir))) return;
  // node:crypto loaded here, not at import: the Stop hook records runs without settings.
  const settings =
    settingsText === null
      ? null
      : (requireBuiltin("node:crypto") as typeof import("node:crypto"))
          .createHash("sha256")
          .update(settingsText)
          .digest("hex");
  writeEntry(
    {
      version: 1,
      run_id: runId,
      run_dir: canonical(runDir),
      created_at: new Date().toISOString(),
      settings_sha256: settings,
      status_sha256: null,
      runner,
      ...found,
    },
    env,
  );
}

/** Updates the record of a run ralph created; does nothing for one it did not. What it found at creation stays. */
export function updateLedgerEntry(
  runDir: string,
  change: Partial<Pick<LedgerEntry, "settings_sha256" | "status_sha256" | "runner" | "review_base">>,
  env: NodeJS.ProcessEnv = process.env,
): void {
  const entry = readLedgerEntry(runDir, env);
  if (entry) writeEntry({ ...entry, ...change }, env);
}

/** The runner this process is, as a record names it. */
export function thisRunner(pidStart: string | null, projectLock: boolean): LedgerRunner {
  return { pid: process.pid, pid_start: pidStart, hostname: hostname(), project_lock: projectLock };
}

/** The live runners that hold the project lock of `projectDir` (whatever became of the lock file). */
export function projectLockHolders(
  projectDir: string,
  alive: RunnerAlive,
  env: NodeJS.ProcessEnv = process.env,
): LedgerEntry[] {
  const runs = `${canonical(join(projectDir, ".ralph", "runs"))}${sep}`;
  let names: string[];
  try {
    names = readdirSync(ledgerDir(env));
  } catch {
    return [];
  }
  const holders: LedgerEntry[] = [];
  for (const name of names) {
    if (!name.endsWith(".json")) continue;
    let entry: LedgerEntry | null;
    try {
      entry = parseEntry(readFileSync(join(ledgerDir(env), name), "utf8"));
    } catch {
      continue;
    }
    if (entry === null) continue;
    if (!existsDir(entry.run_dir)) {
      // A run directory removed (ralph clean, by hand): its record goes too, unless it is new enough that its
      // runner may not have created the directory yet (it records the run first: see recordRunCreated).
      if (!(Date.now() - Date.parse(entry.created_at) < CREATING_MS)) removeQuietly(join(ledgerDir(env), name));
      continue;
    }
    if (entry.run_dir.startsWith(runs) && entry.runner?.project_lock && alive(entry.runner)) holders.push(entry);
  }
  return holders;
}

function existsDir(dir: string): boolean {
  try {
    return readdirSync(dir) !== null;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== "ENOENT";
  }
}

function removeQuietly(file: string): void {
  try {
    unlinkSync(file);
  } catch {
    // already gone
  }
}
