// The next iteration's iter-NNN.log, made ahead on the thread pool. Making a file is a new inode and a
// directory entry: about 0.2 ms on ext4 here, on the runner's one thread at every iteration's start. It is
// made once the agent's tree has ended (nothing of the agent is left to swap it afterwards) and only when
// nothing is there yet (O_EXCL): a file or link already there is left to the iteration's own open, which
// appends to it or refuses it as before.
import { closeSync, constants, fstatSync, lstatSync, open, unlinkSync } from "node:fs";

const FLAGS =
  constants.O_WRONLY |
  constants.O_CREAT |
  constants.O_EXCL |
  constants.O_APPEND |
  constants.O_NOFOLLOW |
  constants.O_NONBLOCK;

/** One log being made ahead: its path, and its descriptor once made (null while the open runs or when it failed). */
interface Ahead {
  file: string;
  fd: number | null;
  /** Given up (taken too early, or disposed): the descriptor is closed when the open completes. */
  abandoned: boolean;
  /** Disposed with the run: a file made for nothing is removed once made. */
  unused: boolean;
}

/** Makes at most one log ahead at a time. */
export class LogAhead {
  private ahead: Ahead | null = null;
  /** The last open started: settled once it has completed and its file is kept, closed or removed. */
  private last: Promise<void> = Promise.resolve();

  /** Starts making `file` (the one before is given up); settles once the open has completed or failed. */
  prepare(file: string): Promise<void> {
    this.giveUp(false);
    const ahead: Ahead = { file, fd: null, abandoned: false, unused: false };
    this.ahead = ahead;
    this.last = new Promise((resolve) => {
      open(file, FLAGS, 0o600, (error, fd) => {
        if (error) {
          if (this.ahead === ahead) this.ahead = null;
        } else if (!ahead.abandoned) ahead.fd = fd;
        else finish(ahead.file, fd, ahead.unused);
        resolve();
      });
    });
    return this.last;
  }

  /** The descriptor of `file` opened for appending when it was made ahead and is ready; otherwise null. */
  take(file: string): number | null {
    const ahead = this.ahead;
    if (ahead === null) return null;
    // Made for another iteration (this one runs again): removed while it is empty.
    if (ahead.file !== file) this.giveUp(true);
    // Still being made: the iteration opens the same path itself, so the file (if this open makes it) is kept.
    else if (ahead.fd === null) this.giveUp(false);
    else {
      this.ahead = null;
      return ahead.fd;
    }
    return null;
  }

  /** The run is ending: a log made for an iteration that will not run here is removed (it is empty), once its open has completed. */
  dispose(): Promise<void> {
    this.giveUp(true);
    return this.last;
  }

  private giveUp(unused: boolean): void {
    const ahead = this.ahead;
    this.ahead = null;
    if (ahead === null) return;
    ahead.abandoned = true;
    ahead.unused = unused;
    if (ahead.fd !== null) finish(ahead.file, ahead.fd, unused);
  }
}

/** Closes a log made ahead; one made for nothing is removed while it is still empty and still at its path. */
function finish(file: string, fd: number, unused: boolean): void {
  try {
    const made = unused ? fstatSync(fd) : null;
    const there = made?.size === 0 ? lstatSync(file) : null;
    if (made && there && there.ino === made.ino && there.dev === made.dev) unlinkSync(file);
  } catch {
    // gone already, or no longer ours to remove
  }
  closeSync(fd);
}
