// A `--parallel` child's settings and plan: its parent's, for one task, in a worktree of its own.
import { readRegular } from "../store/regular-file.js";
import { parseSavedSettings } from "../config/saved-settings.js";
import type { RunSettings } from "../config/run-options.js";
import { readPlanFile, type Plan } from "../store/plan-file.js";
import { runPaths } from "../store/run-paths.js";
import { refused } from "./launch-failure.js";
import { resolvePromptFile } from "./resolve-prompt-file.js";
import { fileDigest, ledgerDir, readLedgerEntry } from "../control/run-ledger.js";

/**
 * The child of run `parentId` working on task `task`: the parent's settings.json and state.md, with the
 * limits the parent gave it (`given`), always in a worktree, never fanning out itself.
 */
export function childRun(
  projectDir: string,
  parentId: string,
  task: string | null,
  name: string | null,
  given: Partial<RunSettings>,
): { settings: RunSettings; plan: Plan } {
  if (!task || !name)
    throw refused("--parent is set by a --parallel run on its children, together with --task and --name");
  const { parent, plan } = parentRun(projectDir, parentId);
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
    tasks: plan.tasks,
  };
  return { settings, plan: { ...plan, active: true } };
}

/**
 * A resolve run of `parentId`: one iteration of the parent's agent in its integration worktree, with the
 * prompt the parent wrote for it, no task list, no checks of its own (the parent checks) and no commits,
 * bounded as a child is by the limits the parent gave it (`given`: what is left of its own).
 */
export function resolveRun(
  projectDir: string,
  parentId: string,
  name: string | null,
  given: Partial<RunSettings> = {},
): { settings: RunSettings; plan: Plan } {
  if (!name) throw refused("--resolve is set by a --parallel run, together with --parent and --name");
  const { parent } = parentRun(projectDir, parentId);
  let prompt: Buffer;
  try {
    prompt = readRegular(resolvePromptFile(projectDir, parentId, name), 8 * 1024 * 1024);
  } catch {
    throw refused(`--resolve: run ${parentId} wrote no prompt for ${name}`);
  }
  const settings: RunSettings = {
    ...parent,
    ...given,
    name,
    parent: parentId,
    resolve: true,
    task: null,
    tasks: null,
    checks: [],
    worktree: false,
    commit: "off",
    parallel: null,
    json: false,
    live: false,
    maxIterations: 1,
  };
  return {
    settings,
    plan: { active: true, maxIterations: 1, completionPromise: null, completionCriteria: [], tasks: null, prompt },
  };
}

/** The parent run's settings.json and state.md. */
function parentRun(projectDir: string, parentId: string): { parent: RunSettings; plan: Plan } {
  const paths = runPaths(projectDir, parentId);
  let text: string;
  try {
    text = readRegular(paths.settings, 1024 * 1024).toString("utf8");
  } catch {
    throw refused(`--parent ${parentId}: no readable ${paths.settings}`);
  }
  // A child's agent can reach the parent's run directory: its settings count only as the parent's runner wrote them.
  const entry = readLedgerEntry(paths.dir);
  if (entry === null || (entry.settings_sha256 !== null && entry.settings_sha256 !== fileDigest(paths.settings))) {
    throw refused(
      `--parent ${parentId}: ${paths.settings} is not what ralph wrote (it differs from the record in ${ledgerDir()}); no child is started from it`,
    );
  }
  const saved = parseSavedSettings(text, paths.settings);
  if (!saved.ok) throw refused(saved.message);
  const read = readPlanFile(paths.state);
  if (!read.ok) throw refused(read.message);
  return { parent: saved.settings, plan: read.plan };
}
