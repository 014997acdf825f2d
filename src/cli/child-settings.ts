// A `--parallel` child's settings and plan: its parent's, for one task, in a worktree of its own.
import { readRegular } from "../store/regular-file.js";
import { parseSavedSettings } from "../config/saved-settings.js";
import type { RunSettings } from "../config/run-options.js";
import { readPlanFile, type Plan } from "../store/plan-file.js";
import { runPaths } from "../store/run-paths.js";
import { UsageError } from "./usage-error.js";
import { fileDigest, ledgerDir, readLedgerEntry } from "../control/run-ledger.js";

/**
 * The child of run `parentId` working on task `task`: the parent's settings.json and state.md, with the
 * limits the parent gave it (`given`), always in a worktree, never fanning out itself.
 */
export function childRun(projectDir: string, parentId: string, task: string | null, name: string | null, given: Partial<RunSettings>): { settings: RunSettings; plan: Plan } {
  if (!task || !name) throw new UsageError("--parent is set by a --parallel run on its children, together with --task and --name");
  const paths = runPaths(projectDir, parentId);
  let text: string;
  try {
    text = readRegular(paths.settings, 1024 * 1024).toString("utf8");
  } catch {
    throw new UsageError(`--parent ${parentId}: no readable ${paths.settings}`);
  }
  // A child's agent can reach the parent's run directory: its settings count only as the parent's runner wrote them.
  const entry = readLedgerEntry(paths.dir);
  if (entry === null || (entry.settings_sha256 !== null && entry.settings_sha256 !== fileDigest(paths.settings))) {
    throw new UsageError(`--parent ${parentId}: ${paths.settings} is not what ralph wrote (it differs from the record in ${ledgerDir()}); no child is started from it`);
  }
  const saved = parseSavedSettings(text, paths.settings);
  if (!saved.ok) throw new UsageError(saved.message);
  const read = readPlanFile(paths.state);
  if (!read.ok) throw new UsageError(read.message);
  const parent = saved.settings;
  const settings: RunSettings = {
    ...parent,
    ...given,
    name,
    parent: parentId,
    task,
    worktree: true,
    commit: parent.commit ?? "iteration",
    parallel: null,
    json: false,
    live: false,
    tasks: read.plan.tasks,
  };
  return { settings, plan: { ...read.plan, active: true } };
}
