// What the subreaper launcher forks, as spawnAgent sees it: shaped like the ChildProcess of Node's spawn (a pid,
// its stdin, stdout, stderr and status pipe, 'spawn' or 'error', then 'exit' and 'close'), its ends of the pipes
// opened from the launcher's descriptors through /proc.
import { EventEmitter } from "node:events";
import { closeSync, constants, openSync } from "node:fs";
import { Socket } from "node:net";
import { PassThrough } from "node:stream";
import { exitOf } from "./agent-process.js";

/** A subreaper forked by the launcher, shaped like the ChildProcess of `spawn`. */
export class LaunchedChild extends EventEmitter {
  pid: number | undefined = undefined;
  readonly stdin: PassThrough | null;
  readonly stdout = new PassThrough();
  readonly stderr = new PassThrough();
  readonly stdio: Array<PassThrough | null>;
  private exit: { code: number | null; signal: NodeJS.Signals | null } | null = null;
  /** stdout and stderr not yet closed. */
  private outputs = 2;

  constructor(withStdin: boolean) {
    super();
    this.stdin = withStdin ? new PassThrough() : null;
    this.stdio = [this.stdin, this.stdout, this.stderr, new PassThrough()];
  }

  /** The launcher has forked it: its ends of the pipes are opened from the launcher's descriptors. */
  attach(pid: number, launcher: number, fds: number[]): void {
    // All four opened first: one that fails leaves none of them open.
    const opened: number[] = [];
    try {
      fds.forEach((fd, index) =>
        opened.push(openSync(`/proc/${launcher}/fd/${fd}`, index === 0 ? constants.O_WRONLY : constants.O_RDONLY)),
      );
    } catch (error) {
      for (const fd of opened) closeSync(fd);
      throw error;
    }
    const [stdinFd, ...readFds] = opened;
    const readers = [this.stdout, this.stderr, this.stdio[3] as PassThrough];
    readFds.forEach((fd, index) => {
      const socket = new Socket({ fd, readable: true, writable: false });
      const target = readers[index] as PassThrough;
      socket.on("error", () => socket.destroy());
      socket.on("close", () => {
        target.end();
        // Like Node's 'close': after the exit and once the output pipes are closed.
        if (index < 2) {
          this.outputs--;
          this.maybeClose();
        }
      });
      socket.pipe(target, { end: false });
    });
    const writer = new Socket({ fd: stdinFd as number, readable: false, writable: true });
    writer.on("error", () => writer.destroy());
    if (this.stdin) this.stdin.pipe(writer);
    else writer.end();
    this.pid = pid;
    this.emit("spawn");
  }

  /** The subreaper has left with wait status `status`. */
  left(status: number): void {
    const signal = status & 127;
    this.exit = exitOf(signal === 0 ? { code: status >> 8, signal: null } : { code: null, signal });
    this.emit("exit", this.exit.code, this.exit.signal);
    this.maybeClose();
  }

  /** It could not be started. */
  fail(error: NodeJS.ErrnoException): void {
    this.emit("error", error);
  }

  /** Signals the subreaper (ChildProcess.kill's contract: false when it is gone). */
  kill(signal: NodeJS.Signals = "SIGTERM"): boolean {
    if (this.pid === undefined || this.exit) return false;
    try {
      process.kill(this.pid, signal);
      return true;
    } catch {
      return false;
    }
  }

  private maybeClose(): void {
    if (this.exit && this.outputs === 0) {
      this.outputs = -1;
      this.emit("close", this.exit.code, this.exit.signal);
    }
  }
}
