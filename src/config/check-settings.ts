// The rules that span several options, in one step after each option is read on its own: which agent runs
// (--agent, --agent-cmd, `-- CMD ARGS`, --fallback-agent), what --commit may do, and how --tasks, --task,
// --task-index and --parallel go together. Failures are values: one line naming the flags and what is expected.
import type { RunSettings } from "./run-options.js";

/** The settings with the agent settled (a command given means the command agent), or what is wrong with them. */
export type CheckedSettings = { ok: true; settings: RunSettings } | { ok: false; message: string };

/** What the command line says beside the settings: the words after `--`, and whether an agent was named. */
export interface GivenAgent {
  /** The words after `--` (null: no `--`). */
  trailing: readonly string[] | null;
  /** --agent or RALPH_AGENT was given (a ralph.yaml `agent:` default gives way to a command). */
  agentGiven: boolean;
}

const fail = (message: string): CheckedSettings => ({ ok: false, message });

/** Checks the rules between options of a run a person starts; the first broken one is the answer. */
export function checkSettings(settings: RunSettings, given: GivenAgent): CheckedSettings {
  // --parent and --resolve are set only on the internal command a --parallel run starts its children with.
  if (settings.parent)
    return fail("--parent is set by a --parallel run on its child runs (ralph child-run), not by hand");
  if (settings.resolve)
    return fail("--resolve is set by a --parallel run on its resolve runs, together with --parent and --name");
  const { trailing } = given;
  if (trailing && trailing.length === 0) return fail("-- must be followed by a command and its arguments");
  if (trailing && settings.agentCmd) return fail("give the command with --agent-cmd or after --, not both");
  const agentCmd = trailing ? [...trailing] : settings.agentCmd;
  if (agentCmd && given.agentGiven && settings.agent !== "command") {
    return fail(`--agent ${settings.agent} does not take a command; use --agent command (or leave --agent out)`);
  }
  const agent = agentCmd ? "command" : settings.agent;
  if (agent === "command" && !agentCmd) return fail("--agent command needs --agent-cmd CMD or -- CMD ARGS");
  const repeated = settings.fallbackAgents.find(
    (name, i) => name === agent || settings.fallbackAgents.indexOf(name) !== i,
  );
  if (repeated)
    return fail(`--fallback-agent: expected agents other than the main one and each other, got ${repeated} twice`);
  if (settings.commit === "iteration" && !settings.worktree && settings.parallel === null) {
    return fail("--commit iteration needs --worktree: ralph commits only on a run's own branch, never on yours");
  }
  if (settings.taskIndex !== null) {
    if (!settings.tasks) return fail("--task-index needs --tasks FILE: the task list it picks a task of");
    if (settings.task)
      return fail("--task-index and --task do not go together: give the task by its position or by its id");
    if (settings.parallel !== null)
      return fail("--parallel and --task-index do not go together: --parallel gives each child its task");
  }
  if (settings.task && !settings.tasks) return fail("--task needs --tasks FILE: the task list it names a task of");
  if (settings.parallel !== null) {
    if (!settings.tasks) return fail("--parallel needs --tasks FILE: each child run works on one of its tasks");
    if (settings.task) return fail("--parallel and --task do not go together: --parallel gives each child its task");
  }
  return { ok: true, settings: { ...settings, agent, agentCmd } };
}
