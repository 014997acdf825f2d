// iter-NNN.log: the agent's raw output, redacted on the way in, written without holding it in memory; and
// beside it which of its bytes came from stderr (iter-NNN.stderr, see stderr-marks.ts).
import { fstatSync } from "node:fs";
import type { Redactor } from "../redact/redactor.js";
import type { StreamRedactor } from "../redact/stream-redactor.js";
import type { WriteGuard } from "./write-guard.js";
import { FileAppender } from "./file-appender.js";
import { openAppend } from "./regular-file.js";
import { StderrMarker, writeStderrMarks } from "./stderr-marks.js";

/** One iteration's output log; a failed write is reported to the guard and the rest is dropped. */
export class IterationLog {
  private readonly file: FileAppender;
  private readonly redactors = new Map<NodeJS.ReadableStream, StreamRedactor>();
  private readonly paused = new Set<NodeJS.ReadableStream>();
  /** Bytes written so far, and what of them came from stderr. */
  private offset = 0;
  private readonly marker = new StderrMarker();
  private stderr: NodeJS.ReadableStream | null = null;

  /** `file`: the log's path, or a descriptor opened for appending; `stderrMarks`: where to say which bytes came from stderr. */
  constructor(
    file: string | number,
    private readonly redactor: Redactor,
    private readonly guard: WriteGuard,
    private readonly stderrMarks: string | null = null,
  ) {
    // Opened now, before the agent starts: a planted link or FIFO fails the iteration with nothing running.
    // The log is a copy: a failed write (disk full) must neither crash the runner nor stall the agent.
    const fd = typeof file === "number" ? file : openAppend(file);
    // An iteration run again (after a usage limit) appends to its log: marks count from its end.
    this.offset = fstatSync(fd).size;
    this.file = new FileAppender(
      fd,
      (error) => guard.fail(error),
      () => this.resume(),
    );
  }

  /**
   * Writes a chunk of `source`. A fast agent must not fill memory with writes waiting for the disk:
   * `source` is paused until the log has caught up (the agent then blocks on its own writes).
   */
  write(source: NodeJS.ReadableStream, chunk: Buffer, fromStderr = false): void {
    let redactor = this.redactors.get(source);
    if (!redactor) this.redactors.set(source, (redactor = this.redactor.stream()));
    if (fromStderr) this.stderr = source;
    const text = redactor.pushText(chunk);
    this.mark(source, text.length);
    if (this.file.write(text) || this.paused.has(source)) return;
    this.paused.add(source);
    source.pause();
  }

  /** Writes what the redactors held back and closes the file, then the stderr marks (when stderr wrote anything). */
  async end(): Promise<void> {
    for (const [source, redactor] of this.redactors) {
      const text = redactor.endText();
      this.mark(source, text.length);
      this.file.write(text);
    }
    await this.file.end();
    if (this.stderrMarks === null || !this.marker.any) return;
    const file = this.stderrMarks;
    this.guard.attempt(() => writeStderrMarks(file, this.marker.marks));
  }

  /** A whole line of the agent's output (or of its stderr) has been written: says where stderr's lines came. */
  lineEnded(fromStderr: boolean): void {
    this.marker.line(fromStderr);
  }

  /** Counts `length` bytes of `source` written at the end of the log, marking them when they are stderr's. */
  private mark(source: NodeJS.ReadableStream, length: number): void {
    if (length === 0) return;
    this.marker.bytes(this.offset, length, source === this.stderr);
    this.offset += length;
  }

  private resume(): void {
    for (const source of this.paused) source.resume();
    this.paused.clear();
  }
}
