// Delivering one event to a command: the event JSON on its stdin, supervised like an agent (the run's cgroup
// or tree mode), its whole tree ended once it exits or after a limit.
import { runSupervised, type SpawnTree } from "../process/run-supervised.js";
import type { AgentExit } from "../process/spawn-agent.js";
import type { DeliveryResult } from "./post-webhook.js";
/** How a notification command runs. */
export interface CommandLimits {
  /** Time the command may take before its tree is ended (default 10 000 ms). */
  limitMs: number;
  /** Time between SIGTERM and SIGKILL when it is ended (default 2000 ms). */
  graceMs: number;
}

/** The command defaults: 10 s, then SIGTERM and 2 s of grace. */
export const COMMAND_LIMITS: CommandLimits = { limitMs: 10_000, graceMs: 2000 };

/** Marks every process a notification command starts, so its whole tree can be found and ended. */
export const NOTIFY_MARKER_KEY = "RALPH_NOTIFY_TREE";

function describeExit(exit: AgentExit | null): string {
  if (exit === null) return "ended";
  return exit.signal !== null ? `killed by ${exit.signal}` : `exited with code ${exit.code}`;
}

/** How much of a failing command's stderr is shown: its first lines, clipped. */
const STDERR_LINES = 3;
const STDERR_CHARS = 400;

function firstLines(stderr: Buffer[]): string {
  const text = Buffer.concat(stderr).toString("utf8").trim();
  if (text === "") return "";
  const lines = text.split(/\r?\n/).slice(0, STDERR_LINES).join(" | ");
  return `: ${lines.length > STDERR_CHARS ? `${lines.slice(0, STDERR_CHARS)}…` : lines}`;
}

/**
 * Runs `argv` (never through a shell itself; a command line comes as `sh -c LINE`) with `stdin` written to it,
 * supervised by `spawn` (the run's supervision). When it exits, anything it left running is ended too; when it
 * outlives `limitMs` or `abort` fires, its whole tree is ended (at once on abort). Never rejects.
 */
export async function runNotifyCommand(
  argv: string[],
  stdin: string,
  options: {
    cwd: string;
    env: NodeJS.ProcessEnv;
    limits: CommandLimits;
    abort: AbortSignal;
    spawn?: SpawnTree | undefined;
  },
): Promise<DeliveryResult> {
  const stderr: Buffer[] = [];
  let kept = 0;
  const outcome = await runSupervised({
    argv,
    cwd: options.cwd,
    env: options.env,
    stdin,
    markerKey: NOTIFY_MARKER_KEY,
    limitMs: options.limits.limitMs,
    graceMs: options.limits.graceMs,
    politeSignals: ["SIGTERM"],
    abort: options.abort,
    spawn: options.spawn,
    // Output is not shown anywhere, but must be read or a chatty command would block on a full pipe.
    onStdout: () => undefined,
    onStderr: (chunk) => {
      if (kept >= 4096) return;
      stderr.push(chunk);
      kept += chunk.length;
    },
  });
  if (!outcome.started) return { ok: false, attempts: 1, message: outcome.message };
  const { report } = outcome;
  if (report === null) return { ok: false, attempts: 1, message: "its process tree could not be listed to end it" };
  const survivors = report.survivors > 0 ? `; ${report.survivors} process(es) survived` : "";
  if (outcome.ended === "exited") {
    if (outcome.exit?.code === 0 && survivors === "") return { ok: true, attempts: 1 };
    return { ok: false, attempts: 1, message: `${describeExit(outcome.exit)}${survivors}${firstLines(stderr)}` };
  }
  const why =
    outcome.ended === "aborted"
      ? "abandoned: the run was exiting"
      : `did not finish within ${options.limits.limitMs} ms`;
  return {
    ok: false,
    attempts: 1,
    message: `${why}; its tree was ended (${report.found + report.lateFound} process(es))${survivors}${firstLines(stderr)}`,
  };
}
