// What `ralph continue` trusts is checked against the runner's record first: a run ralph did not create is
// not continued, and a settings.json or final status.json that differs from what ralph wrote is refused.
import type { RunPaths } from "../store/run-paths.js";
import { fileDigest, ledgerDir, readLedgerEntry } from "./run-ledger.js";

/** Why run `id` must not be continued from its files, or null when they are what ralph wrote. */
export function continueRefusal(id: string, paths: RunPaths, env: NodeJS.ProcessEnv = process.env): string | null {
  const entry = readLedgerEntry(paths.dir, env);
  if (entry === null)
    return `run ${id} is foreign: ralph has no record of creating ${paths.dir} (it keeps its records in ${ledgerDir(env)}: was it started with another HOME or XDG_STATE_HOME?); it is not continued`;
  if (entry.settings_sha256 !== null && entry.settings_sha256 !== fileDigest(paths.settings)) {
    return `run ${id}: settings.json is not what ralph wrote (its digest differs from the record in ${ledgerDir(env)}); refusing to continue with it. Start a new run with the settings you want`;
  }
  if (entry.status_sha256 !== null && entry.status_sha256 !== fileDigest(paths.status)) {
    return `run ${id}: status.json is not what its runner left (its digest differs from the record in ${ledgerDir(env)}); refusing to continue with its counters. Start a new run`;
  }
  return null;
}
