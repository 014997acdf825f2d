// Runs one completion check written as a shell command, supervised like an agent: the run's supervision
// (a cgroup of its own, a subreaper, or parentage and marker), a timeout, an output cap, and its whole tree
// ended once it exits, so a check (a script the agent could edit) cannot leave processes running.
import { runSupervised, type SpawnTree } from "../process/run-supervised.js";

/** Where and how a check command runs. */
export interface ShellContext {
  cwd: string;
  env: NodeJS.ProcessEnv;
  signal?: AbortSignal | undefined;
  outputCapBytes: number;
  /** Starts the check's tree (the run's supervision); spawnAgent's own tree mode when absent. */
  spawn?: SpawnTree | undefined;
}

/** How a check command ended, with the tail of its output. */
export interface ShellRun {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  output: string;
  timedOut: boolean;
  aborted: boolean;
  error?: string;
}

/** Marks every process a check command starts, so its whole tree can be found and ended. */
export const CHECK_MARKER_KEY = "RALPH_CHECK_TREE";

// The user wrote this check as a shell command, so it is one of the places a shell runs.
/** Runs `command` with `/bin/sh -c` and resolves when it and everything it started have ended (never rejects). */
export async function runCheckCommand(command: string, context: ShellContext, timeoutMs: number): Promise<ShellRun> {
  const tail = new TailBuffer(context.outputCapBytes);
  const outcome = await runSupervised({
    argv: ["/bin/sh", "-c", command],
    cwd: context.cwd,
    env: context.env,
    stdin: null,
    markerKey: CHECK_MARKER_KEY,
    limitMs: timeoutMs,
    // A check past its time, or of a run that is stopping, is killed at once, as are its leftovers.
    graceMs: 0,
    politeSignals: [],
    abort: context.signal,
    spawn: context.spawn,
    onStdout: (chunk) => tail.push(chunk),
    onStderr: (chunk) => tail.push(chunk),
  });
  if (!outcome.started)
    return { exitCode: null, signal: null, output: "", timedOut: false, aborted: false, error: outcome.message };
  const exit = outcome.ended === "exited" ? outcome.exit : null;
  return {
    exitCode: exit?.code ?? null,
    signal: exit?.signal ?? (outcome.ended === "exited" ? null : "SIGKILL"),
    output: tail.text(),
    timedOut: outcome.ended === "limit",
    aborted: outcome.ended === "aborted",
  };
}

/** Keeps the last `cap` bytes of a stream of chunks. */
class TailBuffer {
  private chunks: Buffer[] = [];
  private size = 0;

  constructor(private readonly cap: number) {}

  push(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.size += chunk.length;
    while (this.chunks.length > 1 && this.size - (this.chunks[0]?.length ?? 0) >= this.cap) {
      this.size -= this.chunks.shift()?.length ?? 0;
    }
  }

  text(): string {
    const all = Buffer.concat(this.chunks);
    let start = Math.max(0, all.length - this.cap);
    // Do not start in the middle of a UTF-8 character.
    while (start > 0 && start < all.length && ((all[start] ?? 0) & 0xc0) === 0x80) start += 1;
    return all.subarray(start).toString("utf8");
  }
}
