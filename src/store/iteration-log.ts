// iter-NNN.log: the agent's raw output, redacted on the way in, written without holding it in memory.
import type { Redactor } from "../redact/redactor.js";
import type { StreamRedactor } from "../redact/stream-redactor.js";
import type { WriteGuard } from "./write-guard.js";
import { FileAppender } from "./file-appender.js";
import { openAppend } from "./regular-file.js";

/** One iteration's output log; a failed write is reported to the guard and the rest is dropped. */
export class IterationLog {
  private readonly file: FileAppender;
  private readonly redactors = new Map<NodeJS.ReadableStream, StreamRedactor>();
  private readonly paused = new Set<NodeJS.ReadableStream>();

  /** `file`: the log's path, or a descriptor opened for appending. */
  constructor(
    file: string | number,
    private readonly redactor: Redactor,
    guard: WriteGuard,
  ) {
    // Opened now, before the agent starts: a planted link or FIFO fails the iteration with nothing running.
    // The log is a copy: a failed write (disk full) must neither crash the runner nor stall the agent.
    const fd = typeof file === "number" ? file : openAppend(file);
    this.file = new FileAppender(fd, (error) => guard.fail(error), () => this.resume());
  }

  /**
   * Writes a chunk of `source`. A fast agent must not fill memory with writes waiting for the disk:
   * `source` is paused until the log has caught up (the agent then blocks on its own writes).
   */
  write(source: NodeJS.ReadableStream, chunk: Buffer): void {
    let redactor = this.redactors.get(source);
    if (!redactor) this.redactors.set(source, (redactor = this.redactor.stream()));
    if (this.file.write(redactor.pushText(chunk)) || this.paused.has(source)) return;
    this.paused.add(source);
    source.pause();
  }

  /** Writes what the redactors held back and closes the file. */
  end(): Promise<void> {
    for (const redactor of this.redactors.values()) this.file.write(redactor.endText());
    return this.file.end();
  }

  private resume(): void {
    for (const source of this.paused) source.resume();
    this.paused.clear();
  }
}
