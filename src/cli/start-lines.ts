// The lines a run prints before its first iteration: what runs, under which cap, with which permissions.
import { PERMISSION_MODES, permissionFlags } from "../agents/permission-mode.js";
import { formatDuration } from "../util/parse-value.js";
import { describeTarget } from "../notify/notifier.js";
import { Redactor } from "../redact/redactor.js";
import type { StartRunInput } from "../launch/start-run-input.js";

/** What a person should know before the agent starts working in their project. */
export function startLines(
  input: Pick<StartRunInput, "runId" | "settings" | "plan" | "previous"> & {
    worktree?: { path: string; branch: string } | null;
  },
): string[] {
  const { settings, plan: state } = input;
  const cap =
    state.maxIterations === 0
      ? "no iteration cap"
      : `max ${state.maxIterations} iteration${state.maxIterations === 1 ? "" : "s"}`;
  const lines = [`ralph: run ${input.runId} with the ${settings.agent} agent (${cap})`];
  if (input.previous)
    lines.push(
      `continuing after iteration ${input.previous.iteration}; the next is iteration ${input.previous.iteration + 1}`,
    );
  if (input.worktree) {
    const commits =
      input.settings.commit === "off"
        ? "nothing is committed (--commit off)"
        : "each iteration's changes are committed there";
    lines.push(
      `working in ${input.worktree.path} on branch ${input.worktree.branch}; ${commits}; your checkout is not touched`,
    );
  }
  const mode = PERMISSION_MODES[settings.agent];
  const flags = permissionFlags(settings.agent, settings.agentArgs ?? []);
  if (mode && flags.length > 0) {
    lines.push(
      `${settings.agent} runs with ${flags.join(" ")}: it edits files and runs commands without asking; to change that, pass --agent-args "${mode.example}"`,
    );
  } else if (mode) {
    lines.push(
      `${settings.agent} runs with the permission mode from --agent-args: ${(settings.agentArgs ?? []).join(" ")}`,
    );
  }
  if (settings.fallbackAgents.length > 0) {
    const after =
      settings.maxWaitMs === 0
        ? "any usage limit"
        : `a usage limit resetting more than ${formatDuration(settings.maxWaitMs)} away`;
    lines.push(
      `on ${after}, the iteration runs with ${settings.fallbackAgents.join(", then ")} instead (each with its own defaults)`,
    );
  }
  if (settings.notifyTargets.length > 0) {
    const redactor = new Redactor({});
    const shown = settings.notifyTargets.map(
      (target) => `${describeTarget(target, redactor)} (${target.events.join(", ")})`,
    );
    lines.push(`notifications: ${shown.join("; ")}`);
  }
  const reviewers = state.completionCriteria
    .filter((criterion) => criterion.review)
    .map((criterion) => criterion.check);
  if (reviewers.length > 0) {
    lines.push(
      `review: ${reviewers.join(", ")} must approve before the run ends DONE; a reviewer sees the task and the run's diff, the tree read-only (mounted so in a sandbox; elsewhere a change it makes voids its verdict)`,
    );
  }
  if (!state.completionPromise && state.completionCriteria.length === 0 && !state.tasks) {
    lines.push("no completion promise, check or task list: the run ends only at its cap, a stop or a failure");
  }
  return lines;
}
