// Whether a process belongs to some ralph run's agent: a request from there (`ralph answer`, `set`, `stop`,
// `continue`, or a request file naming it) is the agent speaking for the person, and is refused.
//
// What is checked, strongest first: the process's cgroup (an agent cgroup `ralph-NS-PID-START/<name>`
// holds every descendant, detached or not, in cgroup mode); an ancestor that is a run's subreaper (every
// orphan of the agent is re-parented to it in subreaper mode); an ancestor that carries a run's marker in
// its environment or is a ralph runner (what a process that only cleared its own environment keeps).
// A process that detached (setsid, double fork) in tree mode has none of these: see the README.
import { readFileSync } from "node:fs";
import { basename, dirname } from "node:path";
import { isAlive, readProcess } from "../process/proc-table.js";

/** The subreaper's process name (launcher.ts sets it with PR_SET_NAME). */
const SUBREAPER_NAME = "ralph-subreaper";
/** A runner's own cgroup: agent cgroups are made inside it. */
const RUNNER_CGROUP = /^ralph-\d+-\d+-\d+$/;
/** The environment entries a run gives its agent. */
const RUN_VARIABLES = ["RALPH_SUPERVISOR=", "RALPH_RUN_DIR="];
/** ralph's subcommands that run agents. */
const RUNNER_COMMANDS = new Set(["run", "continue", "demo"]);

/** Why process `pid` belongs to a ralph run's agent tree, or null when nothing says it does. */
export function insideRunReason(pid: number): string | null {
  const cgroup = agentCgroupOf(pid);
  if (cgroup !== null) return `it runs in the agent cgroup ${cgroup}`;
  let info = readProcess(pid);
  for (let depth = 0; info && isAlive(info) && depth < 256; depth++) {
    if (info.comm === SUBREAPER_NAME) return `it descends from a run's subreaper (pid ${info.pid})`;
    if (depth > 0 && isRunner(info.pid)) return `it descends from a ralph runner (pid ${info.pid})`;
    const variable = runVariableOf(info.pid);
    if (variable !== null)
      return depth === 0 ? `${variable} is set` : `its parent process ${info.pid} has ${variable} set`;
    if (info.ppid <= 1) break;
    info = readProcess(info.ppid);
  }
  return null;
}

/** Why this process (the CLI itself, with environment `env`) is inside a run, or null. */
export function callerInsideRun(env: NodeJS.ProcessEnv): string | null {
  for (const entry of RUN_VARIABLES) {
    const name = entry.slice(0, -1);
    if (env[name] !== undefined) return `${name} is set`;
  }
  return insideRunReason(process.pid);
}

/** The agent cgroup `pid` is in (a directory below a runner's cgroup), or null. */
function agentCgroupOf(pid: number): string | null {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/cgroup`, "utf8");
  } catch {
    return null;
  }
  for (const line of text.split("\n")) {
    const path = line.slice(line.indexOf(":", line.indexOf(":") + 1) + 1);
    const parts = path.split("/");
    const at = parts.findIndex((part) => RUNNER_CGROUP.test(part));
    if (at >= 0 && at < parts.length - 1 && (parts[at + 1] ?? "") !== "") return path;
  }
  return null;
}

/** The run variable set in `pid`'s environment (RALPH_SUPERVISOR or RALPH_RUN_DIR), or null. */
function runVariableOf(pid: number): string | null {
  let environ: string;
  try {
    environ = readFileSync(`/proc/${pid}/environ`, "latin1");
  } catch {
    return null;
  }
  for (const entry of environ.split("\0")) {
    const found = RUN_VARIABLES.find((variable) => entry.startsWith(variable));
    if (found) return found.slice(0, -1);
  }
  return null;
}

/** Whether `pid` is a ralph runner: `node …/cli/main.cjs run|continue|demo …` (or main.js) or `… ralph run …`. */
function isRunner(pid: number): boolean {
  const argv = commandLine(pid);
  if (argv === null || argv.length < 3) return false;
  const script = argv[1] ?? "";
  const isRalph =
    basename(script) === "ralph" ||
    (["main.cjs", "main.js"].includes(basename(script)) && basename(dirname(script)) === "cli");
  return isRalph && RUNNER_COMMANDS.has(argv[2] ?? "");
}

/** `pid`'s argv, or null when it cannot be read. */
export function commandLine(pid: number): string[] | null {
  try {
    const argv = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
    if (argv[argv.length - 1] === "") argv.pop();
    return argv;
  } catch {
    return null;
  }
}

/** The refusal of `ralph COMMAND` run from inside a run's agent tree, or null when the caller is outside every run. */
export function insideRunRefusal(command: string, env: NodeJS.ProcessEnv): string | null {
  const why = callerInsideRun(env);
  return why === null
    ? null
    : `ralph ${command} is for people: it does not run inside the agent of a ralph run (${why})`;
}
