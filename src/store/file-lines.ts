// Reading a run's append-only files (events.jsonl, run.log, iter-NNN.log) in bounded chunks, forwards or
// backwards from the end: memory stays bounded by the chunk and the longest line kept, whatever the size,
// and a line longer than the limit (or a file without newlines) is skipped, never gathered.
import { constants } from "node:fs";
import { open, type FileHandle } from "node:fs/promises";

/** Bytes read per step. */
export const CHUNK_BYTES = 256 * 1024;
/** Lines longer than this are skipped: no event ralph writes comes near it. */
export const MAX_LINE_BYTES = 1024 * 1024;

const NEWLINE = 0x0a;

/** Opens `file` for reading the way the runner does: never through a link, never blocking on a FIFO, regular files only. */
export async function openLog(file: string): Promise<FileHandle | null> {
  let handle: FileHandle;
  try {
    handle = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    return null;
  }
  if (!(await handle.stat()).isFile()) {
    await handle.close();
    return null;
  }
  return handle;
}

/** Complete lines of a growing file from byte `from` on; each `next()` gives at most one chunk's worth. */
export class ForwardLines {
  private offset: number;
  private carry: Buffer[] = [];
  private carried = 0;
  private skipping = false;

  constructor(
    private readonly file: string,
    from = 0,
    private readonly maxLine = MAX_LINE_BYTES,
  ) {
    this.offset = from;
  }

  /** The byte offset just past the last complete line given. */
  get position(): number {
    return this.offset - this.carried;
  }

  /** The next complete lines (possibly none), or null when the file holds nothing new right now. */
  async next(): Promise<string[] | null> {
    const handle = await openLog(this.file);
    if (!handle) return null;
    let read: number;
    const buffer = Buffer.allocUnsafe(CHUNK_BYTES);
    try {
      const { size } = await handle.stat();
      if (size < this.offset) [this.offset, this.carry, this.carried, this.skipping] = [0, [], 0, false]; // replaced or truncated
      if (size === this.offset) return null;
      ({ bytesRead: read } = await handle.read(buffer, 0, Math.min(CHUNK_BYTES, size - this.offset), this.offset));
    } finally {
      await handle.close();
    }
    if (read === 0) return null;
    this.offset += read;
    return this.split(buffer.subarray(0, read));
  }

  private split(data: Buffer): string[] {
    const lines: string[] = [];
    let start = 0;
    for (let end = data.indexOf(NEWLINE); end !== -1; end = data.indexOf(NEWLINE, start)) {
      if (!this.skipping) {
        const piece = data.subarray(start, end);
        lines.push(this.carried === 0 ? piece.toString("utf8") : Buffer.concat([...this.carry, piece]).toString("utf8"));
      }
      [this.carry, this.carried, this.skipping, start] = [[], 0, false, end + 1];
    }
    if (start < data.length && !this.skipping) {
      // A line still being written: kept (copied, the chunk is not) unless it is already too long.
      const rest = Buffer.from(data.subarray(start));
      if (this.carried + rest.length > this.maxLine) [this.carry, this.carried, this.skipping] = [[], 0, true];
      else [this.carry, this.carried] = [[...this.carry, rest], this.carried + rest.length];
    }
    return lines;
  }
}

/** Where the complete lines of an open file end: just past its last newline. */
export async function completeEnd(handle: FileHandle): Promise<number> {
  const { size } = await handle.stat();
  const probe = Buffer.allocUnsafe(Math.min(CHUNK_BYTES, size));
  // A last line still being written is not shown yet: the follower gives it once complete.
  for (let pos = size; pos > 0; ) {
    const length = Math.min(probe.length, pos);
    pos -= length;
    const { bytesRead } = await handle.read(probe, 0, length, pos);
    const newline = probe.subarray(0, bytesRead).lastIndexOf(NEWLINE);
    if (newline !== -1) return pos + newline + 1;
    if (size - pos > MAX_LINE_BYTES) return pos; // an endless last line: followed from here, and skipped
  }
  return 0;
}

/** A line read back from the end, with the byte offset it starts at. */
export interface PlacedLine {
  text: string;
  start: number;
}

/**
 * The complete lines of `handle` before byte `end` (a line boundary), newest first, one chunk's worth per
 * step (the caller stops reading by leaving the loop). Lines longer than `maxLine` are skipped, and so are
 * lines holding `unwanted` (looked for in the bytes, so they are never decoded).
 */
export async function* linesBackward(handle: FileHandle, end: number, maxLine = MAX_LINE_BYTES, unwanted?: Buffer): AsyncGenerator<PlacedLine[]> {
  let pos = end;
  let tail: Buffer[] = [];
  let tailLength = 0;
  let skipping = false;
  let first = true;
  const buffer = Buffer.allocUnsafe(CHUNK_BYTES);
  while (pos > 0) {
    const length = Math.min(CHUNK_BYTES, pos);
    pos -= length;
    const { bytesRead } = await handle.read(buffer, 0, length, pos);
    const data = buffer.subarray(0, bytesRead);
    const lines: PlacedLine[] = [];
    // The newline that ends the last line is not a line of its own.
    let stop = first && data[data.length - 1] === NEWLINE ? data.length - 1 : data.length;
    first = false;
    const previous = () => (stop > 0 ? data.lastIndexOf(NEWLINE, stop - 1) : -1);
    for (let newline = previous(); newline !== -1; newline = previous()) {
      const wanted = unwanted === undefined || (tailLength === 0 ? data.subarray(newline + 1, stop).indexOf(unwanted) === -1 : !Buffer.concat([data.subarray(newline + 1, stop), ...tail]).includes(unwanted));
      if (!skipping && wanted) {
        const text = tailLength === 0 ? data.toString("utf8", newline + 1, stop) : Buffer.concat([data.subarray(newline + 1, stop), ...tail]).toString("utf8");
        lines.push({ text, start: pos + newline + 1 });
      }
      [tail, tailLength, skipping, stop] = [[], 0, false, newline];
    }
    if (stop > 0 && !skipping) {
      if (tailLength + stop > maxLine) [tail, tailLength, skipping] = [[], 0, true];
      else [tail, tailLength] = [[Buffer.from(data.subarray(0, stop)), ...tail], tailLength + stop];
    }
    if (pos === 0 && !skipping && (unwanted === undefined || !Buffer.concat(tail).includes(unwanted))) lines.push({ text: Buffer.concat(tail).toString("utf8"), start: 0 });
    yield lines;
  }
}
