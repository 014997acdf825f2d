// iter-NNN.log: the agent's raw output, redacted on the way in, written without holding it in memory.
import { createWriteStream, type WriteStream } from "node:fs";
import type { Redactor } from "../redact/redactor.js";
import type { StreamRedactor } from "../redact/stream-redactor.js";
import type { WriteGuard } from "./write-guard.js";
import { openAppend } from "./regular-file.js";

/** One iteration's output log; a failed write is reported to the guard and the rest is dropped. */
export class IterationLog {
  private readonly log: WriteStream;
  private readonly redactors = new Map<NodeJS.ReadableStream, StreamRedactor>();
  private failed = false;

  constructor(
    file: string,
    private readonly redactor: Redactor,
    guard: WriteGuard,
  ) {
    // Opened now, before the agent starts: a planted link or FIFO fails the iteration with nothing running.
    this.log = createWriteStream("", { fd: openAppend(file) });
    this.log.on("error", (error: NodeJS.ErrnoException) => {
      // The log is a copy: a failed write (disk full) must neither crash the runner nor stall the agent.
      this.failed = true;
      guard.fail(error);
      for (const source of this.redactors.keys()) source.resume();
    });
  }

  /**
   * Writes a chunk of `source`. A fast agent must not fill memory with writes waiting for the disk:
   * `source` is paused until the log has drained (the agent then blocks on its own writes).
   */
  write(source: NodeJS.ReadableStream, chunk: Buffer): void {
    if (this.failed) return;
    let redactor = this.redactors.get(source);
    if (!redactor) this.redactors.set(source, (redactor = this.redactor.stream()));
    const out = redactor.push(chunk);
    if (out.length === 0 || this.log.write(out)) return;
    source.pause();
    this.log.once("drain", () => source.resume());
  }

  /** Writes what the redactors held back and closes the file. */
  end(): Promise<void> {
    if (!this.failed) for (const redactor of this.redactors.values()) this.log.write(redactor.end());
    // 'close' follows both a finished and a failed stream.
    return new Promise<void>((resolve) => {
      if (this.log.closed) return resolve();
      this.log.once("close", () => resolve());
      this.log.end();
    });
  }
}
