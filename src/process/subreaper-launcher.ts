// One Perl launcher per runner under a subreaper: each agent's subreaper is a fork of it, so an iteration no
// longer starts Perl (about 1.5 ms each; README, Benchmarks). What it forks looks to spawnAgent like the
// ChildProcess Node's spawn gives: a pid, its stdin, stdout, stderr and status pipe, 'spawn' or 'error', then
// 'exit' and 'close'. The runner cannot make a pipe without starting a process, so it opens the launcher's.
// The agent runs as the same user and may kill or stop the launcher: a launcher that is not running (gone,
// a zombie, stopped) is killed and replaced at the next start, and each launcher answers only for its own
// subreapers.
import { spawn, type ChildProcess } from "node:child_process";
import type { Socket } from "node:net";
import { LaunchedChild } from "./launched-child.js";
import { LAUNCHER_SCRIPT } from "./launcher-script.js";
import { readProcess } from "./proc-table.js";

/** What to start: the argv (the agent's own), its directory and environment, and whether it gets a stdin pipe. */
export interface LaunchRequest {
  argv: string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  withStdin: boolean;
}

/** How long a start may wait for the launcher's answer. */
const START_TIMEOUT_MS = 10_000;

/** Frames a request: a type byte, a 10-digit length, the payload. */
function frame(type: "s" | "g", payload: string): Buffer {
  const body = Buffer.from(payload, "utf8");
  return Buffer.concat([Buffer.from(`${type}${String(body.length).padStart(10, "0")}`, "latin1"), body]);
}

/** One launcher process and the subreapers it has forked that have not yet left. */
interface Running {
  process: ChildProcess;
  children: Map<string, LaunchedChild>;
  buffer: string;
}

/** The launcher of one runner: started at the first agent, ended with `close()` or the runner. */
export class SubreaperLauncher {
  private current: Running | null = null;
  private nextId = 0;

  constructor(
    private readonly perl: string,
    private readonly prctl: number,
    /** The launcher's own environment: the run's, with its marker. */
    private readonly env: NodeJS.ProcessEnv,
  ) {}

  /** Starts `request` under a new subreaper; the result behaves like `spawn`'s ChildProcess. */
  start(request: LaunchRequest): ChildProcess {
    const child = new LaunchedChild(request.withStdin);
    const launcher = this.usable() ?? this.launch();
    const id = String(++this.nextId);
    launcher.children.set(id, child);
    holdLoop(launcher);
    const env = Object.entries(request.env).flatMap(([key, value]) => (value === undefined ? [] : [`${key}=${value}`]));
    const fields = [
      id,
      request.cwd,
      request.withStdin ? "1" : "",
      String(request.argv.length),
      ...request.argv,
      ...env,
    ];
    if (fields.some((field) => field.includes("\0"))) {
      launcher.children.delete(id);
      holdLoop(launcher);
      process.nextTick(() =>
        child.fail(Object.assign(new Error("an argument or variable holds a NUL byte"), { code: "EINVAL" })),
      );
    } else launcher.process.stdin?.write(frame("s", fields.join("\0")));
    // A launcher that does not answer must not leave the run waiting for ever, nor serve the next start.
    setTimeout(() => {
      if (child.pid !== undefined || !launcher.children.has(id)) return;
      launcher.children.delete(id);
      holdLoop(launcher);
      this.end(launcher);
      child.fail(Object.assign(new Error("the subreaper launcher did not answer within 10 s"), { code: "ETIMEDOUT" }));
    }, START_TIMEOUT_MS).unref();
    return child as unknown as ChildProcess;
  }

  /**
   * Ends the launcher: the runner is ending and every agent's tree has been ended. Its subreapers are not
   * signalled; it is killed rather than asked, since an agent may have stopped it.
   */
  close(): void {
    if (this.current) this.end(this.current);
  }

  /**
   * The current launcher if it is running; one that is not (an agent may kill or stop it) is ended. One the
   * agent has just killed may not have run its exit yet: its pending SIGKILL says so.
   */
  private usable(): Running | null {
    const launcher = this.current;
    if (launcher === null) return null;
    const info = readProcess(launcher.process.pid as number);
    if (info && !info.dying && (info.state === "R" || info.state === "S" || info.state === "D")) return launcher;
    this.end(launcher);
    return null;
  }

  /** Closes `launcher`'s input and kills it (it is our unreaped child until its 'exit': the pid is its own). */
  private end(launcher: Running): void {
    if (this.current === launcher) this.current = null;
    launcher.process.stdin?.end();
    launcher.process.kill("SIGKILL");
  }

  private launch(): Running {
    const spawned = spawn(this.perl, ["-e", LAUNCHER_SCRIPT, String(this.prctl)], {
      cwd: "/",
      env: this.env,
      stdio: ["pipe", "pipe", "ignore"],
    });
    const launcher: Running = { process: spawned, children: new Map(), buffer: "" };
    this.current = launcher;
    spawned.unref();
    spawned.stdin?.on("error", () => undefined);
    // Neither the launcher nor its pipes keep the runner alive; its output does while a subreaper is out.
    (spawned.stdin as Socket | null)?.unref();
    (spawned.stdout as Socket | null)?.unref();
    const gone = (error: NodeJS.ErrnoException) => {
      if (this.current === launcher) this.current = null;
      for (const [id, child] of launcher.children) {
        launcher.children.delete(id);
        // Killed (by an agent, say): no one will report its subreapers leaving. Taken as gone, the ending
        // that follows still finds a subreaper alive by its identity and ends its tree.
        if (child.pid === undefined) child.fail(error);
        else child.left(9);
      }
      holdLoop(launcher);
    };
    spawned.once("error", gone);
    spawned.once("exit", () => gone(Object.assign(new Error("the subreaper launcher left"), { code: "ESRCH" })));
    spawned.stdout?.on("data", (chunk: Buffer) => {
      launcher.buffer += chunk.toString("utf8");
      let newline: number;
      while ((newline = launcher.buffer.indexOf("\n")) >= 0) {
        answer(launcher, launcher.buffer.slice(0, newline).split(" "));
        launcher.buffer = launcher.buffer.slice(newline + 1);
      }
    });
    return launcher;
  }
}

/** Acts on one line of `launcher`'s output. */
function answer(launcher: Running, [kind, id = "", ...rest]: string[]): void {
  const child = launcher.children.get(id);
  if (!child) return;
  if (kind === "fds") {
    const [pid, ...fds] = rest.map(Number);
    try {
      child.attach(pid as number, launcher.process.pid as number, fds);
    } catch (error) {
      // Its pipes could not be opened: nothing of it may run on. (A subreaper is its process group's leader.)
      try {
        process.kill(-(pid as number), "SIGKILL");
      } catch {
        // gone already
      }
      child.fail(error as NodeJS.ErrnoException);
    }
    launcher.process.stdin?.write(frame("g", id));
  } else if (kind === "failed") {
    launcher.children.delete(id);
    child.fail(
      Object.assign(new Error(`the subreaper launcher could not fork (errno ${rest[0] ?? "?"})`), { code: "EAGAIN" }),
    );
  } else if (kind === "left") {
    launcher.children.delete(id);
    child.left(Number(rest[0]));
  }
  holdLoop(launcher);
}

/** A launcher's output keeps the runner's event loop alive while, and only while, one of its subreapers is out. */
function holdLoop(launcher: Running): void {
  const output = launcher.process.stdout as Socket | null;
  if (launcher.children.size > 0) output?.ref();
  else output?.unref();
}
