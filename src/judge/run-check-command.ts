// Runs one completion check written as a shell command: its own process group, a timeout, an output cap.
import { spawn } from "node:child_process";

/** Where and how a check command runs. */
export interface ShellContext {
  cwd: string;
  env: NodeJS.ProcessEnv;
  signal?: AbortSignal | undefined;
  outputCapBytes: number;
  /** Wraps the check's argv and environment (the run's sandbox); absent: run as is. */
  wrap?: ((argv: string[], env: NodeJS.ProcessEnv) => { argv: string[]; env: NodeJS.ProcessEnv }) | undefined;
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

// The user wrote this check as a shell command, so it is the one place a shell runs. It gets its own
// process group (detached), so a timeout or abort ends everything it started, and whatever it left
// behind in that group is ended when it exits, so a check cannot leave processes running.
/** Runs `command` with `/bin/sh -c` and resolves when it has ended (never rejects). */
export function runCheckCommand(command: string, context: ShellContext, timeoutMs: number): Promise<ShellRun> {
  return new Promise((done) => {
    const tail = new TailBuffer(context.outputCapBytes);
    const shell = ["/bin/sh", "-c", command];
    const { argv, env } = context.wrap ? context.wrap(shell, context.env) : { argv: shell, env: context.env };
    const child = spawn(argv[0] as string, argv.slice(1), {
      cwd: context.cwd,
      env,
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let timedOut = false;
    let aborted = false;
    let finished = false;
    let drain: NodeJS.Timeout | undefined;
    const killGroup = (): void => {
      if (child.pid === undefined) return;
      try {
        process.kill(-child.pid, "SIGKILL");
      } catch {
        // ESRCH: the group is already gone.
      }
    };
    const onAbort = (): void => {
      aborted = true;
      killGroup();
    };
    // 0 (or Infinity) means no limit; Node fires longer timers at once, so they are capped (~24.8 days).
    const timer =
      timeoutMs > 0 && Number.isFinite(timeoutMs)
        ? setTimeout(() => {
            timedOut = true;
            killGroup();
          }, Math.min(timeoutMs, 2 ** 31 - 1))
        : undefined;
    context.signal?.addEventListener("abort", onAbort, { once: true });
    const finish = (result: Omit<ShellRun, "output" | "timedOut" | "aborted">): void => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      clearTimeout(drain);
      context.signal?.removeEventListener("abort", onAbort);
      child.stdout.destroy();
      child.stderr.destroy();
      done({ ...result, output: tail.text(), timedOut, aborted });
    };
    child.stdout.on("data", (chunk: Buffer) => tail.push(chunk));
    child.stderr.on("data", (chunk: Buffer) => tail.push(chunk));
    child.on("error", (error) => finish({ exitCode: null, signal: null, error: error.message }));
    child.on("close", (exitCode, signal) => finish({ exitCode, signal }));
    child.on("exit", (exitCode, signal) => {
      killGroup();
      // A process that left the group (setsid) may still hold the pipes: drain briefly, then stop waiting.
      drain = setTimeout(() => finish({ exitCode, signal }), 250);
    });
  });
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
