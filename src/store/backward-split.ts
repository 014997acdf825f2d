// The reading back from a file's end that file-lines.ts does, as steps without I/O of their own: the same
// logic serves the asynchronous readers (the dashboard) and the synchronous ones (`ralph status`).

/** Bytes read per step. */
export const CHUNK_BYTES = 256 * 1024;
/** Lines longer than this are skipped: no event ralph writes comes near it. */
export const MAX_LINE_BYTES = 1024 * 1024;

const NEWLINE = 0x0a;

/** A line read back from the end, with the byte offset it starts at. */
export interface PlacedLine {
  text: string;
  start: number;
}

/** The search for where a file's complete lines end (just past its last newline), a chunk at a time. */
export class EndSearch {
  /** Where the next chunk is read into. */
  readonly probe: Buffer;
  /** Where the chunk to read next starts. */
  pos: number;

  constructor(private readonly size: number) {
    this.probe = Buffer.allocUnsafe(Math.min(CHUNK_BYTES, size));
    this.pos = size;
  }

  /** The length of the next chunk to read (at `pos`), or 0: nothing is left, and the end is 0. */
  step(): number {
    const length = Math.min(this.probe.length, this.pos);
    this.pos -= length;
    return length;
  }

  /** The end, once the chunk read holds it (`bytesRead` of `probe`); null: read on. */
  found(bytesRead: number): number | null {
    // A last line still being written is not shown yet: the follower gives it once complete.
    const newline = this.probe.subarray(0, bytesRead).lastIndexOf(NEWLINE);
    if (newline !== -1) return this.pos + newline + 1;
    if (this.size - this.pos > MAX_LINE_BYTES) return this.pos; // an endless last line: followed from here, and skipped
    return null;
  }
}

/** Splitting the chunks read back from a line boundary into lines, newest first (see linesBackward). */
export class BackwardSplit {
  /** Where the next chunk is read into. */
  readonly buffer = Buffer.allocUnsafe(CHUNK_BYTES);
  private tail: Buffer[] = [];
  private tailLength = 0;
  private skipping = false;
  private first = true;

  constructor(
    /** Where the chunk to read next starts. */
    public pos: number,
    private readonly maxLine: number,
    private readonly unwanted: Buffer | undefined,
  ) {}

  /** The length of the next chunk to read (at `pos`), or 0 at the file's start. */
  step(): number {
    const length = Math.min(CHUNK_BYTES, this.pos);
    this.pos -= length;
    return length;
  }

  /** The lines the chunk just read (`bytesRead` of `buffer`) completes. */
  lines(bytesRead: number): PlacedLine[] {
    const { pos, maxLine, unwanted } = this;
    const data = this.buffer.subarray(0, bytesRead);
    const lines: PlacedLine[] = [];
    // The newline that ends the last line is not a line of its own.
    let stop = this.first && data[data.length - 1] === NEWLINE ? data.length - 1 : data.length;
    this.first = false;
    const previous = () => (stop > 0 ? data.lastIndexOf(NEWLINE, stop - 1) : -1);
    for (let newline = previous(); newline !== -1; newline = previous()) {
      const wanted =
        unwanted === undefined ||
        (this.tailLength === 0
          ? data.subarray(newline + 1, stop).indexOf(unwanted) === -1
          : !Buffer.concat([data.subarray(newline + 1, stop), ...this.tail]).includes(unwanted));
      if (!this.skipping && wanted) {
        const text =
          this.tailLength === 0
            ? data.toString("utf8", newline + 1, stop)
            : Buffer.concat([data.subarray(newline + 1, stop), ...this.tail]).toString("utf8");
        lines.push({ text, start: pos + newline + 1 });
      }
      [this.tail, this.tailLength, this.skipping, stop] = [[], 0, false, newline];
    }
    if (stop > 0 && !this.skipping) {
      if (this.tailLength + stop > maxLine) [this.tail, this.tailLength, this.skipping] = [[], 0, true];
      else [this.tail, this.tailLength] = [[Buffer.from(data.subarray(0, stop)), ...this.tail], this.tailLength + stop];
    }
    if (pos === 0 && !this.skipping && (unwanted === undefined || !Buffer.concat(this.tail).includes(unwanted)))
      lines.push({ text: Buffer.concat(this.tail).toString("utf8"), start: 0 });
    return lines;
  }
}
