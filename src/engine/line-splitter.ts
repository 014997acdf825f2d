// Splits a byte stream into lines without holding more than one (capped) line in memory.

const NEWLINE = 10;
const CARRIAGE_RETURN = 13;

/** Calls `onLine` for every complete line; lines longer than `maxLineBytes` are cut (the rest is dropped). */
export class LineSplitter {
  private pending: Buffer[] = [];
  private pendingBytes = 0;
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
      if (this.pendingBytes === 0 && !this.overflowed) this.onLine(decode(chunk, start, Math.min(newline, start + this.maxLineBytes)));
      else {
        this.append(chunk.subarray(start, newline));
        this.emit();
      }
      start = newline + 1;
    }
    if (start < chunk.length) this.append(chunk.subarray(start));
  }

  /** Emits a last line that had no newline. */
  end(): void {
    if (this.pendingBytes > 0 || this.overflowed) this.emit();
  }

  private append(part: Buffer): void {
    const room = this.maxLineBytes - this.pendingBytes;
    if (part.length > room) this.overflowed = true;
    const kept = part.length > room ? part.subarray(0, Math.max(0, room)) : part;
    if (kept.length > 0) {
      this.pending.push(kept);
      this.pendingBytes += kept.length;
    }
  }

  private emit(): void {
    const joined = Buffer.concat(this.pending, this.pendingBytes);
    this.pending = [];
    this.pendingBytes = 0;
    this.overflowed = false;
    this.onLine(decode(joined, 0, joined.length));
  }
}

/** Bytes `start`..`end` as UTF-8 text, without a final carriage return (a CRLF line's). */
function decode(bytes: Buffer, start: number, end: number): string {
  return bytes.toString("utf8", start, end > start && bytes[end - 1] === CARRIAGE_RETURN ? end - 1 : end);
}
