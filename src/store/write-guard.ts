// Failed writes to a run's files (a full disk, a read-only or vanished directory) as a state of the run,
// not as exceptions: the first failure is kept, the run is told, and the runner keeps control.
import { rmSync, writeFileSync } from "node:fs";

/** Bytes set aside at the start of a run, freed to write its ending when the disk fills up. */
const RESERVE_BYTES = 64 * 1024;

/** Whether `error` is a failed file-system call (as opposed to a bug). */
function isFileSystemError(error: unknown): error is NodeJS.ErrnoException {
  return (
    error instanceof Error &&
    typeof (error as NodeJS.ErrnoException).code === "string" &&
    typeof (error as NodeJS.ErrnoException).syscall === "string"
  );
}

/** One line for a failed write: "disk full" for ENOSPC and EDQUOT. */
function describeWriteFailure(error: NodeJS.ErrnoException): string {
  if (error.code === "ENOSPC" || error.code === "EDQUOT") return "disk full";
  return `cannot write the run's files (${error.code ?? "error"})`;
}

/** Keeps the first failed write of a run and a reserve of disk space for its ending. */
export class WriteGuard {
  private readonly controller = new AbortController();
  private problem: string | null = null;
  /** Also throw the error after recording it (for callers that end on any exception, like the Stop hook). */
  rethrow = false;

  constructor(private readonly reserveFile: string | null = null) {}

  /** Sets the reserve aside (best effort: a run that cannot even do this learns it on its first write). */
  reserve(): void {
    if (!this.reserveFile) return;
    try {
      writeFileSync(this.reserveFile, Buffer.alloc(RESERVE_BYTES, 0x20), { mode: 0o600 });
    } catch {
      this.release();
    }
  }

  /** Frees the reserve (at the end of the run, or to make room for recording that end). */
  release(): void {
    if (this.reserveFile) rmSync(this.reserveFile, { force: true });
  }

  /** Aborted at the first failed write; its reason is the one-line description. */
  get failed(): AbortSignal {
    return this.controller.signal;
  }

  /** The first failure's description, or null while every write has succeeded. */
  get failure(): string | null {
    return this.problem;
  }

  /** Runs a write; a file-system failure is recorded (not thrown) and false returned. Bugs still throw. */
  attempt(write: () => void): boolean {
    try {
      write();
      return true;
    } catch (error) {
      if (!isFileSystemError(error)) throw error;
      this.fail(error);
      if (this.rethrow) throw error;
      return false;
    }
  }

  /** Records a failure seen elsewhere (an asynchronous stream's error). */
  fail(error: NodeJS.ErrnoException): void {
    if (this.problem !== null) return;
    this.problem = describeWriteFailure(error);
    this.controller.abort(this.problem);
  }
}
