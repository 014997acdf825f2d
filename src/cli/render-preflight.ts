// How a failed preflight is said: what is missing and how to fix it.
import { INSTALL_COMMANDS } from "../agents/install-hints.js";
import type { AgentName } from "../agents/types.js";
import type { PreflightProblem } from "../launch/launch-failure.js";

/** How to get an agent's CLI, inside the parentheses after "install it". */
function install(agent: AgentName): string {
  if (agent === "command") return "check the command given with --agent-cmd or after --";
  const command = INSTALL_COMMANDS[agent];
  return command === null ? "" : `${command}, or name it with RALPH_${agent.toUpperCase()}_BIN`;
}

/** One line saying what would make iteration 1 fail at once, and how to fix it. */
export function renderPreflight(problem: PreflightProblem): string {
  const off = "(--preflight off skips these checks)";
  switch (problem.kind) {
    case "agent-missing": {
      const demo = problem.agent === "demo" ? "" : "; or try ralph with --agent demo, which needs no CLI";
      return `preflight: the ${problem.agent} agent's program ${problem.program} was not found; install it (${install(problem.agent)})${demo} ${off}`;
    }
    case "not-writable":
      return `preflight: the work directory ${problem.dir} is not writable, so the agent could change nothing there; fix its permissions or run ralph elsewhere ${off}`;
    case "reviewer-missing": {
      const fix = problem.agent === "command" ? "check the review's command" : `install it (${install(problem.agent)})`;
      return `preflight: the reviewer ${JSON.stringify(problem.check)} runs ${problem.program}, which was not found; ${fix} or change the review criterion in ralph.yaml ${off}`;
    }
    case "check-missing":
      return `preflight: check ${JSON.stringify(problem.check)} runs ${problem.program}, which is not on PATH; install it or change the check ${off}`;
    default: {
      const unreachable: never = problem;
      throw new Error(`unknown preflight problem ${JSON.stringify(unreachable)}`);
    }
  }
}
