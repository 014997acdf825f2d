// Every git command ralph runs goes through here: an argv array (never a shell), in a clean environment, with
// the repository's own code switched off, a timeout, and its process group ended on a timeout or an abort.
import { spawn } from "node:child_process";
import { inertConfigArgs, inertEnv, repositoryDrivers } from "./inert-git.js";

/** What one git command did. */
export type GitResult = { ok: true; stdout: string } | { ok: false; code: number | string | null; stderr: string };

/** What one git command did, its output as bytes (or streamed to `onStdout`). */
export type RawGitResult = { ok: true; stdout: Buffer } | { ok: false; code: number | string | null; stderr: string };

/** How one git command runs. */
export interface GitOptions {
  env?: NodeJS.ProcessEnv;
  /** Aborting ends the command's whole process group at once (a signal to the runner, stop --now). */
  signal?: AbortSignal | undefined;
  /** Time the command may take before its group is ended (default 120 s). */
  timeoutMs?: number;
  /** Receives stdout as it arrives instead of keeping it (the result's stdout is then empty). */
  onStdout?: (chunk: Buffer) => void;
  /** Never take optional locks (read-only commands that must not race an agent's own git). */
  noOptionalLocks?: boolean;
  /** An index of ralph's own (a snapshot of the work tree), never the repository's. */
  indexFile?: string;
  /** The `-c` switches instead of the inert ones (a push in a git directory of ralph's own, with the person's ssh and credentials). */
  configArgs?: string[];
}

/** The default limit of one git command. */
export const GIT_TIMEOUT_MS = 120_000;
const MAX_STDOUT_BYTES = 256 * 1024 * 1024;
// A process that left git's group and still holds its pipes must not keep the caller waiting.
const DRAIN_AFTER_EXIT_MS = 250;

export { gitEnv } from "./inert-git.js";

/** Runs `git args...` in `cwd`; stdout is returned untrimmed, stderr's first lines on failure. */
export async function runGit(
  cwd: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
  options: Omit<GitOptions, "env" | "onStdout"> = {},
): Promise<GitResult> {
  const result = await runGitRaw(cwd, args, { ...options, env });
  return result.ok ? { ok: true, stdout: result.stdout.toString("utf8") } : result;
}

/** Runs `git args...` in `cwd` with the repository's hooks, fsmonitor, filters and drivers off (never rejects). */
export async function runGitRaw(cwd: string, args: readonly string[], options: GitOptions = {}): Promise<RawGitResult> {
  return (await gitSession(cwd, options))(args, options.onStdout);
}

/** Runs one git command of a session; `onStdout` receives its output as it arrives. */
export type GitSessionRun = (args: readonly string[], onStdout?: (chunk: Buffer) => void) => Promise<RawGitResult>;

/**
 * Several inert git commands in a row in `cwd` (a stall check, a commit), with the drivers the repository's
 * config names listed once, by a command that runs none. Only for work done while no agent runs, so the
 * configuration cannot change in between.
 */
export async function gitSession(cwd: string, options: Omit<GitOptions, "onStdout"> = {}): Promise<GitSessionRun> {
  const inert = inertEnv(options.env ?? process.env, options.noOptionalLocks === true);
  const env = options.indexFile ? { ...inert, GIT_INDEX_FILE: options.indexFile } : inert;
  const limits = { signal: options.signal, timeoutMs: options.timeoutMs ?? GIT_TIMEOUT_MS };
  const listed = await spawnGit(
    cwd,
    [...inertConfigArgs(), "config", "-z", "--name-only", "--get-regexp", "^(filter|diff|merge)\\."],
    env,
    limits,
  );
  if (!listed.ok && limits.signal?.aborted) return () => Promise.resolve(listed);
  const drivers = listed.ok ? repositoryDrivers(listed.stdout.toString("utf8")) : {};
  const config = options.configArgs ?? inertConfigArgs();
  return (args, onStdout) => spawnGit(cwd, [...config, ...args], { ...env, ...drivers }, { ...limits, onStdout });
}

/** Live git process groups, ended if the runner exits while one still runs. */
const running = new Set<number>();
let exitHook = false;

function killGroup(pid: number | undefined): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, "SIGKILL");
  } catch {
    // ESRCH: the group is gone.
  }
}

function spawnGit(
  cwd: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  limits: { signal: AbortSignal | undefined; timeoutMs: number; onStdout?: ((chunk: Buffer) => void) | undefined },
): Promise<RawGitResult> {
  if (limits.signal?.aborted)
    return Promise.resolve({ ok: false, code: "ABORTED", stderr: "not run: the run is stopping" });
  if (!exitHook) {
    exitHook = true;
    process.once("exit", () => {
      for (const pid of running) killGroup(pid);
    });
  }
  return new Promise((done) => {
    // Its own process group, so ending it ends whatever it started too.
    const child = spawn("git", args, { cwd, env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
    const pid = child.pid;
    if (pid !== undefined) running.add(pid);
    const stdout: Buffer[] = [];
    let size = 0;
    let stderr = "";
    let ended: "timeout" | "aborted" | "too-much-output" | null = null;
    let finished = false;
    let drain: NodeJS.Timeout | undefined;
    const end = (why: "timeout" | "aborted" | "too-much-output"): void => {
      ended ??= why;
      killGroup(pid);
    };
    const onAbort = (): void => end("aborted");
    const timer = setTimeout(() => end("timeout"), Math.min(limits.timeoutMs, 2 ** 31 - 1));
    limits.signal?.addEventListener("abort", onAbort, { once: true });
    const finish = (result: RawGitResult): void => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      clearTimeout(drain);
      limits.signal?.removeEventListener("abort", onAbort);
      if (pid !== undefined) running.delete(pid);
      child.stdout.destroy();
      child.stderr.destroy();
      done(result);
    };
    const outcome = (code: number | null, signal: NodeJS.Signals | null): RawGitResult => {
      if (ended === "timeout")
        return {
          ok: false,
          code: "ETIMEDOUT",
          stderr: `git ${visibleArgs(args)} did not finish within ${limits.timeoutMs} ms; it was ended`,
        };
      if (ended === "aborted")
        return { ok: false, code: "ABORTED", stderr: `git ${visibleArgs(args)} was ended: the run is stopping` };
      if (ended === "too-much-output")
        return {
          ok: false,
          code: "ENOBUFS",
          stderr: `git ${visibleArgs(args)} wrote more than ${MAX_STDOUT_BYTES} bytes`,
        };
      if (code === 0) return { ok: true, stdout: Buffer.concat(stdout) };
      return {
        ok: false,
        code: code ?? signal,
        stderr:
          stderr.trim() ||
          `git ${visibleArgs(args)} ${signal ? `was killed by ${signal}` : `exited with code ${code}`}`,
      };
    };
    child.stdout.on("data", (chunk: Buffer) => {
      if (limits.onStdout) {
        limits.onStdout(chunk);
        return;
      }
      size += chunk.length;
      if (size > MAX_STDOUT_BYTES) return end("too-much-output");
      stdout.push(chunk);
    });
    child.stderr.on("data", (chunk: Buffer) => {
      if (stderr.length < 8192) stderr += chunk.toString("utf8");
    });
    child.on("error", (error: NodeJS.ErrnoException) =>
      finish({ ok: false, code: error.code ?? null, stderr: error.message }),
    );
    child.on("close", (code, signal) => finish(outcome(code, signal)));
    child.on("exit", (code, signal) => {
      // Whatever git started and left behind in its group goes with it.
      killGroup(pid);
      drain = setTimeout(() => finish(outcome(code, signal)), DRAIN_AFTER_EXIT_MS);
    });
  });
}

/** The command as a person would recognise it: without ralph's own `-c` switches. */
function visibleArgs(args: string[]): string {
  const shown: string[] = [];
  for (let i = 0; i < args.length; i++) {
    if (args[i] === "-c" && shown.length === 0) i += 1;
    else shown.push(args[i] ?? "");
  }
  return shown.slice(0, 3).join(" ");
}
