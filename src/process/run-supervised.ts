// Running a person's command (a check, a notification) supervised like an agent: the run's supervision
// (its own cgroup, a subreaper, or parentage and marker), a time limit, and its whole tree ended once it exits.
import { requireBuiltin } from "../util/require-builtin.js";
import { pause } from "../util/pause.js";
import type { EndTreeReport } from "./kill-tree.js";
import { spawnAgent, type AgentExit, type SpawnAgentOptions, type SpawnResult } from "./spawn-agent.js";

// Loaded at the first command, not by every file that imports this one (the Stop hook with a loop, which runs
// a command only when a check does).
const crypto = (): typeof import("node:crypto") => requireBuiltin("node:crypto") as typeof import("node:crypto");

/** Starts a tree (the run's Supervision.spawn, or spawnAgent when there is no run). */
export type SpawnTree = (options: SpawnAgentOptions) => Promise<SpawnResult>;

/** One supervised command. */
export interface SupervisedCommand {
  argv: string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  stdin: string | null;
  /** The environment variable marking its tree (a fresh value per command). */
  markerKey: string;
  /** Time it may take before its tree is ended (0 or Infinity: no limit). */
  limitMs: number;
  /** Time between the polite signals and SIGKILL when it is ended; 0 with no polite signals kills at once. */
  graceMs: number;
  politeSignals: NodeJS.Signals[];
  /** Aborting ends its tree at once. */
  abort?: AbortSignal | undefined;
  spawn?: SpawnTree | undefined;
  onStdout?: (chunk: Buffer) => void;
  onStderr?: (chunk: Buffer) => void;
}

/** How a supervised command went: it could not start, or it ended (by itself, at its limit, or aborted) with its tree. */
export type SupervisedOutcome =
  | { started: false; message: string }
  | { started: true; ended: "exited" | "limit" | "aborted"; exit: AgentExit | null; report: EndTreeReport | null };

// A process that left the tree and still holds the output pipes must not keep the caller waiting.
const DRAIN_MS = 250;

/** Runs the command and resolves once it and everything it started have ended (never rejects). */
export async function runSupervised(command: SupervisedCommand): Promise<SupervisedOutcome> {
  const spawn = command.spawn ?? spawnAgent;
  const started = await spawn({
    argv: command.argv,
    cwd: command.cwd,
    env: command.env,
    stdin: command.stdin,
    marker: { key: command.markerKey, value: crypto().randomUUID() },
  });
  if (!started.ok) return { started: false, message: started.message };
  const { agent } = started;
  agent.stdout.on("data", (chunk: Buffer) => command.onStdout?.(chunk));
  agent.stderr.on("data", (chunk: Buffer) => command.onStderr?.(chunk));
  const limit = new AbortController();
  const onAbort = (): void => limit.abort();
  if (command.abort?.aborted) limit.abort();
  command.abort?.addEventListener("abort", onAbort, { once: true });
  const timed = command.limitMs > 0 && Number.isFinite(command.limitMs);
  const waits: Array<Promise<{ ended: "exited" | "limit" | "aborted"; exit: AgentExit | null }>> = [
    agent.exited.then((exit) => ({ ended: "exited" as const, exit })),
    pause(timed ? Math.min(command.limitMs, 2 ** 31 - 1) : 2 ** 31 - 1, limit.signal).then(() => ({
      ended: command.abort?.aborted ? ("aborted" as const) : ("limit" as const),
      exit: null,
    })),
  ];
  const outcome = await Promise.race(waits);
  limit.abort();
  command.abort?.removeEventListener("abort", onAbort);
  // The process table could not be listed (a null report): the caller says so.
  const report: EndTreeReport | null = await agent
    .end({
      graceMs: command.graceMs,
      politeSignals: command.politeSignals,
      ...(command.abort ? { skipGrace: command.abort } : {}),
    })
    .catch(() => null);
  // Output still in the pipes is read before the result is given.
  await Promise.race([agent.closed, new Promise((resolve) => setTimeout(resolve, DRAIN_MS).unref())]);
  const exit =
    outcome.exit ??
    (await Promise.race([
      agent.exited,
      new Promise<null>((resolve) => setTimeout(() => resolve(null), DRAIN_MS).unref()),
    ]));
  return { started: true, ended: outcome.ended, exit, report };
}
