// `ralph child-run PARENT NAME (--task ID | --resolve)`: the internal command a `--parallel` parent starts each
// child run and resolve run with (when its children run as processes of their own). Not for people.
import type { Command } from "commander";
import { findProject } from "../find-project.js";
import { launchWords } from "../launch-words.js";
import { UsageError } from "../usage-error.js";
import { childRun, resolveRun } from "../../launch/child-settings.js";
import { startRun } from "../../launch/start-run.js";
import { parsePositiveDuration, parseRunId, parseUsd, type Parsed } from "../../util/parse-value.js";

/** The options the parent gives a child. */
export interface ChildRunOptions {
  task?: string;
  resolve?: boolean;
  maxCost?: string;
  maxRuntime?: string;
  watchParent?: boolean;
}

function parsed<T>(flag: string, raw: string, value: Parsed<T>): T {
  if (!value.ok) throw new UsageError(`${flag} ${raw}: expected ${value.expected}`);
  return value.value;
}

/** Starts child run NAME of run PARENT on its task (or as its resolve run) with the limits the parent gave it. */
export async function childRunCommand(parentId: string, name: string, options: ChildRunOptions, _command?: Command): Promise<number> {
  const projectDir = findProject(process.cwd());
  parsed("PARENT", parentId, parseRunId(parentId));
  parsed("NAME", name, parseRunId(name));
  if ((options.resolve === true) === (options.task !== undefined)) throw new UsageError("child-run: give either --task ID or --resolve (set by a --parallel run)");
  const given = {
    ...(options.maxCost !== undefined ? { maxCostUsd: parsed("--max-cost", options.maxCost, parseUsd(options.maxCost)) } : {}),
    ...(options.maxRuntime !== undefined ? { maxRuntimeMs: parsed("--max-runtime", options.maxRuntime, parsePositiveDuration(options.maxRuntime)) } : {}),
  };
  const child = options.resolve ? resolveRun(projectDir, parentId, name) : childRun(projectDir, parentId, options.task ?? null, name, given);
  return startRun({ projectDir, runId: name, settings: child.settings, plan: child.plan, previous: null, projectLock: false, watchParent: options.watchParent === true }, launchWords);
}
