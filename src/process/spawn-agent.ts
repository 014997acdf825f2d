// Starting an agent CLI as the root of a supervised process tree.
import { spawn, type ChildProcess } from "node:child_process";
import { statSync } from "node:fs";
import { constants } from "node:os";
import { endTree, isSame } from "./kill-tree.js";
import { ProcessInventory, type ProcessIdentity, type TreeMarker } from "./inventory.js";
import { isAlive, readProcess } from "./proc-table.js";
import { readLauncherReports, STATUS_FD, subreaperArgv } from "./launcher.js";
import { exitOf, type AgentExit, type AgentProcess } from "./agent-process.js";
import { feedStdin, keepOutput, sealedAgent, type Seal } from "./seal.js";

/** What to start and how. */
export interface SpawnAgentOptions {
  /** Program and arguments; never passed through a shell. */
  argv: string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** Written to the agent's stdin, which is then closed; null → stdin is /dev/null. */
  stdin: string | Buffer | null;
  /** Added to the agent's environment so every process of its tree can be found. */
  marker: TreeMarker;
  /** How often the tree is sampled while the root runs (default 200 ms; one sample costs ~3 ms per 300 processes). */
  inventoryIntervalMs?: number;
  /** Run inside a cgroup or under a subreaper (see supervision.ts); absent → parentage and marker only. */
  seal?: Seal;
}

export type { AgentExit, AgentProcess } from "./agent-process.js";

/** How long end() waits for a subreaper whose agent has ended to leave by itself. */
const SUBREAPER_EXIT_WAIT_MS = 20;

/** The outcome of spawnAgent: a running agent, or why it could not start. */
export type SpawnResult =
  | { ok: true; agent: AgentProcess }
  | { ok: false; error: "not_found" | "not_executable" | "spawn_failed"; message: string };

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

function failure(error: NodeJS.ErrnoException, argv: string[], cwd: string, launcher?: string): SpawnResult {
  const program = argv[0] ?? "";
  if (error.code === "ENOENT" && launcher !== undefined && isDirectory(cwd)) {
    return {
      ok: false,
      error: "spawn_failed",
      message: `${launcher} not found: sealed supervision starts the agent through it (RALPH_SUPERVISION=tree runs without)`,
    };
  }
  if (error.code === "ENOENT") {
    // A missing working directory is also reported as ENOENT by spawn.
    if (!isDirectory(cwd)) return { ok: false, error: "spawn_failed", message: `working directory not found: ${cwd}` };
    return { ok: false, error: "not_found", message: `command not found: ${program}` };
  }
  if (error.code === "EACCES") return { ok: false, error: "not_executable", message: `not executable: ${program}` };
  return { ok: false, error: "spawn_failed", message: `could not start ${program}: ${error.message}` };
}

/** Starts the agent in its own session with piped output and the marker in its environment. */
export async function spawnAgent(options: SpawnAgentOptions): Promise<SpawnResult> {
  const [program, ...args] = options.argv;
  if (program === undefined || program === "") {
    return { ok: false, error: "spawn_failed", message: "empty command" };
  }
  const seal = options.seal;
  const subreaper = seal?.kind === "subreaper" ? seal : null;
  const [command, ...commandArgs] = subreaper
    ? subreaperArgv(subreaper.perl, subreaper.prctl, options.argv)
    : [program, ...args];
  const start = (): ChildProcess =>
    subreaper?.launcher
      ? subreaper.launcher.start({
          argv: options.argv,
          cwd: options.cwd,
          env: { ...options.env, [options.marker.key]: options.marker.value },
          withStdin: options.stdin !== null,
        })
      : spawn(command as string, commandArgs, {
          cwd: options.cwd,
          env: { ...options.env, [options.marker.key]: options.marker.value },
          // Never the terminal's stdin: an agent that sets raw mode would swallow Ctrl-C.
          stdio: [options.stdin === null ? "ignore" : "pipe", "pipe", "pipe", ...(subreaper ? ["pipe" as const] : [])],
          // Own session: a terminal Ctrl-C reaches only the runner, which forwards it.
          detached: true,
          shell: false,
        });
  let child: ChildProcess;
  try {
    if (seal?.kind === "cgroup") {
      const forked = seal.cgroup.forkInside(start);
      if (!forked.ok) return { ok: false, error: "spawn_failed", message: forked.message };
      child = forked.value;
    } else child = start();
  } catch (error) {
    return failure(error as NodeJS.ErrnoException, options.argv, options.cwd, subreaper?.perl);
  }
  const reports = subreaper ? readLauncherReports(child.stdio[STATUS_FD] as NodeJS.ReadableStream) : null;
  // The agent may exit while the subreaper's report is awaited; Node then drains output nobody reads
  // yet. Piping it into our own buffers at once keeps every byte (and the back-pressure).
  if (subreaper) keepOutput(child);
  let hasExited = false;
  /** Whether the root ended by a signal (a subreaper never does by itself: it is killed, or its launcher was). */
  let signalled = false;
  let inventory: ProcessInventory | null = null;
  // Listening before anything else runs, so no event can be missed.
  const exited = new Promise<AgentExit>((resolve) => {
    child.once("exit", (code, signal) => {
      hasExited = true;
      signalled = signal !== null;
      // A last sample: the root's children are orphans now, found again by identity or marker.
      // (A subreaper leaves only once it has no children: nothing to find then.)
      if (!seal) inventory?.sample();
      inventory?.stopSampling();
      resolve({ code, signal });
    });
  });
  const closed = new Promise<AgentExit>((resolve) => {
    child.once("close", (code: number | null, signal: NodeJS.Signals | null) => resolve({ code, signal }));
  });
  // 'spawn' and 'error' are mutually exclusive for a start: whichever comes first decides.
  const started = await new Promise<NodeJS.ErrnoException | null>((resolve) => {
    child.once("spawn", () => resolve(null));
    child.once("error", (error) => resolve(error));
  });
  if (started !== null) return failure(started, options.argv, options.cwd, subreaper?.perl);
  const pid = child.pid as number;
  // Later errors (e.g. a failed kill) must not crash the runner.
  child.on("error", () => undefined);
  const launched = reports ? await reports.started : null;
  if (launched?.kind === "failed") {
    await exited;
    const code =
      launched.errno === null
        ? undefined
        : Object.entries(constants.errno).find(([, value]) => value === launched.errno)?.[0];
    const message = code === undefined ? launched.message : `${code}`;
    return failure(Object.assign(new Error(message), { code }), options.argv, options.cwd);
  }
  if (seal?.kind === "cgroup")
    return { ok: true, agent: sealedAgent(seal, { pid, child, exited, closed, stdin: options.stdin }) };

  const agentExited = reports ? Promise.race([reports.agentExit.then(exitOf), exited]) : exited;
  let agentEnded = false;
  void agentExited.then(() => (agentEnded = true));
  // A subreaper leaves once its last child is gone: ending its tree re-scans then, not at the next poll.
  const subreaperLeft = new AbortController();
  void exited.then(() => subreaperLeft.abort());
  const rootInfo = readProcess(pid);
  const root: ProcessIdentity[] =
    isAlive(rootInfo) && rootInfo !== null ? [{ pid, startTime: rootInfo.startTime }] : [];
  const tracked = new ProcessInventory(pid, options.marker);
  // Under a subreaper the tree is just the subreaper now; its samples follow while the agent runs.
  if (!seal) tracked.sample();
  if (!hasExited) tracked.startSampling(options.inventoryIntervalMs ?? 200);
  inventory = tracked;

  feedStdin(child, options.stdin);

  const agent: AgentProcess = {
    pid,
    stdout: child.stdout as NodeJS.ReadableStream,
    stderr: child.stderr as NodeJS.ReadableStream,
    exited: agentExited,
    closed,
    inventory: tracked,
    async end(endOptions) {
      // A subreaper leaves by itself once its last child is gone: then there is nothing left to look for
      // under it. Waiting briefly for that spares a grace-period poll after most iterations. A zombie has
      // left too, before the word of its exit (from Node, or the launcher) arrives, and says how.
      const alive = (identity: ProcessIdentity): boolean => isSame(identity, readProcess(identity.pid));
      const leftByItself = (): boolean => {
        if (hasExited) return !signalled;
        const info = seal !== undefined && root[0] !== undefined ? readProcess(pid) : null;
        return (
          info?.state === "Z" &&
          info.startTime === root[0]?.startTime &&
          info.exitStatus !== undefined &&
          (info.exitStatus & 0x7f) === 0
        );
      };
      let byItself = leftByItself();
      if (seal && agentEnded && !byItself) {
        await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, SUBREAPER_EXIT_WAIT_MS).unref())]);
        byItself = leftByItself();
      }
      // A subreaper that left by itself had no children left: its tree is empty, unless a process seen in
      // a sample is somehow still alive; then (and in every other case) the full ending runs. One that was
      // killed (by its agent, say) left its orphans to init; the exit made up for a killed launcher leaves
      // its subreaper running, which the root's own check among the sampled catches.
      const sampled = [...root, ...tracked.identities()];
      if (seal && agentEnded && byItself && !sampled.some(alive)) {
        return { found: 0, lateFound: 0, signalled: 0, killed: 0, survivors: 0, durationMs: 0 };
      }
      // After exit the root pid may be reused: it is followed by identity only.
      const rootAlive = !hasExited;
      const report = await endTree(
        rootAlive ? pid : null,
        options.marker,
        sampled,
        seal ? { ...endOptions, wake: subreaperLeft.signal } : endOptions,
      );
      // A live subreaper is part of the tree (its orphans are found through it) but no leftover of the agent.
      return seal && rootAlive && report.found > 0 ? { ...report, found: report.found - 1 } : report;
    },
    resources: () => null,
    memoryCapHit: new Promise<void>(() => undefined),
  };
  return { ok: true, agent };
}
