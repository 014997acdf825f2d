// `ralph child-run PARENT NAME (--task ID | --resolve)`: the internal command a `--parallel` parent starts each
// child run and resolve run with (when its children run as processes of their own). Not for people.
import { findProject } from "../find-project.js";
import { launchWords } from "../launch-words.js";
import { UsageError } from "../usage-error.js";
import { childRun, resolveRun } from "../../launch/child-settings.js";
import { startRun } from "../../launch/start-run.js";
import { parseRunId } from "../../util/parse-value.js";
import { parsedOption, parsedSetting } from "../parsed-option.js";

/** The options the parent gives a child. */
export interface ChildRunOptions {
  task?: string;
  resolve?: boolean;
  maxCost?: string;
  maxRuntime?: string;
  watchParent?: boolean;
}

/** Starts child run NAME of run PARENT on its task (or as its resolve run) with the limits the parent gave it. */
export async function childRunCommand(parentId: string, name: string, options: ChildRunOptions): Promise<number> {
  const projectDir = findProject(process.cwd());
  parsedOption("PARENT", parentId, parseRunId);
  parsedOption("NAME", name, parseRunId);
  if ((options.resolve === true) === (options.task !== undefined))
    throw new UsageError("child-run: give either --task ID or --resolve (set by a --parallel run)");
  const given = {
    ...(options.maxCost !== undefined ? { maxCostUsd: parsedSetting("maxCostUsd", options.maxCost) } : {}),
    ...(options.maxRuntime !== undefined ? { maxRuntimeMs: parsedSetting("maxRuntimeMs", options.maxRuntime) } : {}),
  };
  const child = options.resolve
    ? resolveRun(projectDir, parentId, name, given)
    : childRun(projectDir, parentId, options.task ?? null, name, given);
  return startRun(
    {
      projectDir,
      runId: name,
      settings: child.settings,
      plan: child.plan,
      previous: null,
      projectLock: false,
      watchParent: options.watchParent === true,
    },
    launchWords,
  );
}
