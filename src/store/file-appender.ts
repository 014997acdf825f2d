// Appends to an open file from two buffers of a fixed size: one fills while the other is being written.
// A fast writer then costs no new buffer per write, and a slow disk holds it back instead of filling memory.
import { closeSync, write } from "node:fs";

/** Each buffer's size: the most written at once. */
const BUFFER_BYTES = 256 * 1024;
/** The filling buffer is "full" (the writer should wait) at half its size: a chunk arriving then still fits. */
const FULL_BYTES = BUFFER_BYTES / 2;

/** One file's appender; `onError` hears the first failed write (the rest is dropped), `onDrain` when to go on. */
export class FileAppender {
  private filling: Buffer | null = null;
  private filled = 0;
  private spare: Buffer | null = null;
  private writing = false;
  private failed = false;
  private ending: (() => void) | null = null;
  private closed = false;

  constructor(
    private readonly fd: number,
    private readonly onError: (error: NodeJS.ErrnoException) => void,
    private readonly onDrain: () => void,
  ) {}

  /** Appends latin1 text (one byte per character); false: wait for `onDrain` before appending more. */
  write(text: string): boolean {
    if (this.failed || this.closed || text.length === 0) return true;
    let buffer = (this.filling ??= this.spare ?? Buffer.allocUnsafe(BUFFER_BYTES));
    if (buffer === this.spare) this.spare = null;
    if (this.filled + text.length > buffer.length) {
      // More than one buffer's worth at once (a redactor releasing a long run): this write alone grows it.
      const grown = Buffer.allocUnsafe(Math.max(2 * buffer.length, this.filled + text.length));
      buffer.copy(grown, 0, 0, this.filled);
      buffer = this.filling = grown;
    }
    this.filled += buffer.write(text, this.filled, "latin1");
    this.flush();
    return this.filled < FULL_BYTES;
  }

  /** Writes what is left and closes the file; resolves once it is closed. */
  end(): Promise<void> {
    if (this.closed) return Promise.resolve();
    return new Promise((resolve) => {
      this.ending = resolve;
      if (!this.writing) this.finish();
    });
  }

  private flush(): void {
    if (this.writing || this.failed || this.filled === 0 || !this.filling) return;
    const out = this.filling;
    const length = this.filled;
    this.filling = this.spare;
    this.spare = null;
    this.filled = 0;
    this.writing = true;
    this.writeFrom(out, 0, length);
  }

  private writeFrom(out: Buffer, offset: number, length: number): void {
    write(this.fd, out, offset, length - offset, null, (error, written) => {
      if (error) return this.fail(error);
      if (offset + written < length) return this.writeFrom(out, offset + written, length);
      this.writing = false;
      if (out.length === BUFFER_BYTES) this.spare = out;
      this.flush();
      if (this.filled < FULL_BYTES) this.onDrain();
      if (!this.writing && this.ending) this.finish();
    });
  }

  private fail(error: NodeJS.ErrnoException): void {
    this.writing = false;
    this.failed = true;
    this.filling = this.spare = null;
    this.filled = 0;
    this.onError(error);
    this.onDrain();
    if (this.ending) this.finish();
  }

  private finish(): void {
    const resolve = this.ending;
    this.ending = null;
    this.closed = true;
    // Every write is done by now: closing is one quick call, not worth a trip through the thread pool (and
    // the wake-up that costs the loop) at the end of every iteration. The run's other files close the same way.
    try {
      closeSync(this.fd);
    } catch {
      // Already closed, or a failing disk: nothing is left to write either way.
    }
    resolve?.();
  }
}
