// Delivering one event to a command: the event JSON on its stdin, its whole tree ended after a limit.
import { randomUUID } from "node:crypto";
import { pause } from "../util/pause.js";
import { spawnAgent, type AgentExit } from "../process/spawn-agent.js";
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

function describeExit(exit: AgentExit): string {
  return exit.signal !== null ? `killed by ${exit.signal}` : `exited with code ${exit.code}`;
}

/**
 * Runs `argv` (never through a shell) with `stdin` written to it, in its own session. When it exits,
 * anything it left running is ended too; when it outlives `limitMs` or `abort` fires, its whole tree is
 * ended (at once on abort). Never rejects.
 */
export async function runNotifyCommand(
  argv: string[],
  stdin: string,
  options: { cwd: string; env: NodeJS.ProcessEnv; limits: CommandLimits; abort: AbortSignal },
): Promise<DeliveryResult> {
  const started = await spawnAgent({ argv, cwd: options.cwd, env: options.env, stdin, marker: { key: NOTIFY_MARKER_KEY, value: randomUUID() } });
  if (!started.ok) return { ok: false, attempts: 1, message: started.message };
  const agent = started.agent;
  // Output is not shown anywhere, but must be read or a chatty command would block on a full pipe.
  agent.stdout.resume();
  agent.stderr.resume();
  const limit = new AbortController();
  const onAbort = (): void => limit.abort();
  options.abort.addEventListener("abort", onAbort, { once: true });
  const outcome = await Promise.race([
    agent.exited.then((exit) => ({ kind: "exited" as const, exit })),
    pause(options.limits.limitMs, limit.signal).then(() => ({ kind: "limit" as const })),
  ]);
  limit.abort();
  options.abort.removeEventListener("abort", onAbort);
  let report;
  try {
    report = await agent.end({ graceMs: options.limits.graceMs, politeSignals: ["SIGTERM"], skipGrace: options.abort });
  } catch {
    return { ok: false, attempts: 1, message: "its process tree could not be listed to end it" };
  }
  const survivors = report.survivors > 0 ? `; ${report.survivors} process(es) survived` : "";
  if (outcome.kind === "exited") {
    if (outcome.exit.code === 0 && survivors === "") return { ok: true, attempts: 1 };
    return { ok: false, attempts: 1, message: `${describeExit(outcome.exit)}${survivors}` };
  }
  const why = options.abort.aborted ? "abandoned: the run was exiting" : `did not finish within ${options.limits.limitMs} ms`;
  return { ok: false, attempts: 1, message: `${why}; its tree was ended (${report.found + report.lateFound} process(es))${survivors}` };
}
