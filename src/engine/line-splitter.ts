// Splits a byte stream into lines without holding more than one (capped) line in memory.

const NEWLINE = 10;
const CARRIAGE_RETURN = 13;
const FIRST_CARRY_BYTES = 4096;

/** Calls `onLine` for every complete line; lines longer than `maxLineBytes` are cut (the rest is dropped). */
export class LineSplitter {
  /**
   * The start of a line that continues in the next chunk, copied: a view into the chunk would keep the
   * whole chunk alive until then, long enough for the young generation to promote it.
   */
  private carry: Buffer | null = null;
  private carried = 0;
  private overflowed = false;

  constructor(
    private readonly onLine: (line: string) => void,
    private readonly maxLineBytes = 1024 * 1024,
  ) {}

  /** Feeds a chunk of output. */
  push(chunk: Buffer): void {
    let start = 0;
    for (let newline = chunk.indexOf(NEWLINE, start); newline !== -1; newline = chunk.indexOf(NEWLINE, start)) {
      // A line within one chunk is decoded from it directly: no copy, no Buffer per line.
      if (this.carried === 0 && !this.overflowed)
        this.onLine(decode(chunk, start, Math.min(newline, start + this.maxLineBytes)));
      else {
        this.append(chunk, start, newline);
        this.emit();
      }
      start = newline + 1;
    }
    if (start < chunk.length) this.append(chunk, start, chunk.length);
  }

  /** Emits a last line that had no newline. */
  end(): void {
    if (this.carried > 0 || this.overflowed) this.emit();
  }

  private append(chunk: Buffer, start: number, end: number): void {
    const room = this.maxLineBytes - this.carried;
    if (end - start > room) this.overflowed = true;
    const kept = Math.min(end - start, room);
    if (kept <= 0) return;
    const wanted = this.carried + kept;
    if (!this.carry || this.carry.length < wanted) {
      let size = Math.max(FIRST_CARRY_BYTES, this.carry?.length ?? 0);
      while (size < wanted) size *= 2;
      const grown = Buffer.allocUnsafe(Math.min(size, this.maxLineBytes));
      this.carry?.copy(grown, 0, 0, this.carried);
      this.carry = grown;
    }
    chunk.copy(this.carry, this.carried, start, start + kept);
    this.carried = wanted;
  }

  private emit(): void {
    const line = this.carry ? decode(this.carry, 0, this.carried) : "";
    this.carried = 0;
    this.overflowed = false;
    this.onLine(line);
  }
}

/** Bytes `start`..`end` as UTF-8 text, without a final carriage return (a CRLF line's). */
function decode(bytes: Buffer, start: number, end: number): string {
  return bytes.toString("utf8", start, end > start && bytes[end - 1] === CARRIAGE_RETURN ? end - 1 : end);
}
