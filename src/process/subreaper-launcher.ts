// One Perl launcher per runner under a subreaper: each agent's subreaper is a fork of it, so an iteration no
// longer starts Perl (about 1.5 ms each; README, Benchmarks). What it forks looks to spawnAgent like the
// ChildProcess Node's spawn gives: a pid, its stdin, stdout, stderr and status pipe, 'spawn' or 'error', then
// 'exit' and 'close'. The runner cannot make a pipe without starting a process, so it opens the launcher's.
import { spawn, type ChildProcess } from "node:child_process";
import type { Socket } from "node:net";
import { LaunchedChild } from "./launched-child.js";
import { LAUNCHER_SCRIPT } from "./launcher-script.js";

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

/** The launcher of one runner: started at the first agent, ended with `close()` or the runner. */
export class SubreaperLauncher {
  private process: ChildProcess | null = null;
  private readonly children = new Map<string, LaunchedChild>();
  private nextId = 0;
  private buffer = "";

  constructor(
    private readonly perl: string,
    private readonly prctl: number,
    /** The launcher's own environment: the run's, with its marker. */
    private readonly env: NodeJS.ProcessEnv,
  ) {}

  /** Starts `request` under a new subreaper; the result behaves like `spawn`'s ChildProcess. */
  start(request: LaunchRequest): ChildProcess {
    const child = new LaunchedChild(request.withStdin);
    const launcher = this.process ?? this.launch();
    const id = String(++this.nextId);
    this.children.set(id, child);
    this.holdLoop(launcher);
    const env = Object.entries(request.env).flatMap(([key, value]) => (value === undefined ? [] : [`${key}=${value}`]));
    const fields = [id, request.cwd, request.withStdin ? "1" : "", String(request.argv.length), ...request.argv, ...env];
    if (fields.some((field) => field.includes("\0"))) {
      this.children.delete(id);
      this.holdLoop(launcher);
      process.nextTick(() => child.fail(Object.assign(new Error("an argument or variable holds a NUL byte"), { code: "EINVAL" })));
    } else launcher.stdin?.write(frame("s", fields.join("\0")));
    // A launcher that does not answer must not leave the run waiting for ever.
    setTimeout(() => {
      if (child.pid !== undefined || !this.children.has(id)) return;
      this.children.delete(id);
      this.holdLoop(launcher);
      child.fail(Object.assign(new Error("the subreaper launcher did not answer within 10 s"), { code: "ETIMEDOUT" }));
    }, START_TIMEOUT_MS).unref();
    return child as unknown as ChildProcess;
  }

  /** Ends the launcher (its subreapers and their agents are not touched). */
  close(): void {
    this.process?.stdin?.end();
    this.process = null;
  }

  private launch(): ChildProcess {
    const launcher = spawn(this.perl, ["-e", LAUNCHER_SCRIPT, String(this.prctl)], { cwd: "/", env: this.env, stdio: ["pipe", "pipe", "ignore"] });
    this.process = launcher;
    launcher.unref();
    launcher.stdin?.on("error", () => undefined);
    // Neither the launcher nor its pipes keep the runner alive; its output does while a subreaper is out.
    (launcher.stdin as Socket | null)?.unref();
    (launcher.stdout as Socket | null)?.unref();
    const gone = (error: NodeJS.ErrnoException) => {
      if (this.process === launcher) this.process = null;
      for (const [id, child] of this.children) {
        this.children.delete(id);
        // Killed (by an agent, say): no one will report its subreapers leaving. Taken as gone, the ending
        // that follows still finds a subreaper alive by its identity and ends its tree.
        if (child.pid === undefined) child.fail(error);
        else child.left(9);
      }
    };
    launcher.once("error", gone);
    launcher.once("exit", () => gone(Object.assign(new Error("the subreaper launcher left"), { code: "ESRCH" })));
    launcher.stdout?.on("data", (chunk: Buffer) => {
      this.buffer += chunk.toString("utf8");
      let newline: number;
      while ((newline = this.buffer.indexOf("\n")) >= 0) {
        this.answer(launcher, this.buffer.slice(0, newline).split(" "));
        this.buffer = this.buffer.slice(newline + 1);
      }
    });
    return launcher;
  }

  private answer(launcher: ChildProcess, [kind, id = "", ...rest]: string[]): void {
    const child = this.children.get(id);
    if (!child) return;
    if (kind === "fds") {
      const [pid, ...fds] = rest.map(Number);
      try {
        child.attach(pid as number, launcher.pid as number, fds);
      } catch (error) {
        // Its pipes could not be opened: nothing of it may run on. (A subreaper is its process group's leader.)
        try {
          process.kill(-(pid as number), "SIGKILL");
        } catch {
          // gone already
        }
        child.fail(error as NodeJS.ErrnoException);
      }
      launcher.stdin?.write(frame("g", id));
    } else if (kind === "failed") {
      this.children.delete(id);
      child.fail(Object.assign(new Error(`the subreaper launcher could not fork (errno ${rest[0] ?? "?"})`), { code: "EAGAIN" }));
    } else if (kind === "left") {
      this.children.delete(id);
      child.left(Number(rest[0]));
    }
    this.holdLoop(launcher);
  }

  /** The launcher's output keeps the runner's event loop alive while, and only while, a subreaper is out. */
  private holdLoop(launcher: ChildProcess): void {
    const output = launcher.stdout as Socket | null;
    if (this.children.size > 0) output?.ref();
    else output?.unref();
  }
}
