// Starting an agent CLI as the root of a supervised process tree.
import { spawn, type ChildProcess } from "node:child_process";
import { statSync } from "node:fs";
import { endTree, type EndTreeOptions, type EndTreeReport } from "./kill-tree.js";
import { ProcessInventory, type ProcessIdentity, type TreeMarker } from "./inventory.js";
import { isAlive, readProcess } from "./proc-table.js";

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
}

/** How the root process ended. */
export interface AgentExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** A running agent tree. */
export interface AgentProcess {
  pid: number;
  stdout: NodeJS.ReadableStream;
  stderr: NodeJS.ReadableStream;
  /** Resolves when the root process exits (never rejects); output may still be arriving. */
  exited: Promise<AgentExit>;
  /** Resolves once the root has exited and stdout/stderr are closed (a leftover holding them delays it until end()). */
  closed: Promise<AgentExit>;
  inventory: ProcessInventory;
  /** Ends the whole tree; safe after exit (reaps leftovers) and more than once. */
  end(options: EndTreeOptions): Promise<EndTreeReport>;
}

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

function failure(error: NodeJS.ErrnoException, argv: string[], cwd: string): SpawnResult {
  const program = argv[0] ?? "";
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
  let child: ChildProcess;
  try {
    child = spawn(program, args, {
      cwd: options.cwd,
      env: { ...options.env, [options.marker.key]: options.marker.value },
      // Never the terminal's stdin: an agent that sets raw mode would swallow Ctrl-C.
      stdio: [options.stdin === null ? "ignore" : "pipe", "pipe", "pipe"],
      // Own session: a terminal Ctrl-C reaches only the runner, which forwards it.
      detached: true,
      shell: false,
    });
  } catch (error) {
    return failure(error as NodeJS.ErrnoException, options.argv, options.cwd);
  }
  let hasExited = false;
  let inventory: ProcessInventory | null = null;
  // Listening before anything else runs, so no event can be missed.
  const exited = new Promise<AgentExit>((resolve) => {
    child.once("exit", (code, signal) => {
      hasExited = true;
      // A last sample: the root's children are orphans now, found again by identity or marker.
      inventory?.sample();
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
  if (started !== null) return failure(started, options.argv, options.cwd);
  const pid = child.pid as number;
  // Later errors (e.g. a failed kill) must not crash the runner.
  child.on("error", () => undefined);

  const rootInfo = readProcess(pid);
  const root: ProcessIdentity[] = isAlive(rootInfo) && rootInfo !== null ? [{ pid, startTime: rootInfo.startTime }] : [];
  const tracked = new ProcessInventory(pid, options.marker);
  tracked.sample();
  if (!hasExited) tracked.startSampling(options.inventoryIntervalMs ?? 200);
  inventory = tracked;


  if (child.stdin) {
    // An agent that exits without reading its stdin makes the write fail with EPIPE: not our failure.
    child.stdin.on("error", () => undefined);
    child.stdin.end(options.stdin ?? "");
  }

  const agent: AgentProcess = {
    pid,
    stdout: child.stdout as NodeJS.ReadableStream,
    stderr: child.stderr as NodeJS.ReadableStream,
    exited,
    closed,
    inventory: tracked,
    end(endOptions) {
      // After exit the root pid may be reused: it is followed by identity only.
      return endTree(hasExited ? null : pid, options.marker, [...root, ...tracked.identities()], endOptions);
    },
  };
  return { ok: true, agent };
}
