// Reading a run's append-only files (events.jsonl, run.log, iter-NNN.log) in bounded chunks, forwards or
// backwards from the end: memory stays bounded by the chunk and the longest line kept, whatever the size,
// and a line longer than the limit (or a file without newlines) is skipped, never gathered.
import { closeSync, constants, fstatSync, openSync, readSync } from "node:fs";
import { open, type FileHandle } from "node:fs/promises";
import { BackwardSplit, CHUNK_BYTES, EndSearch, MAX_LINE_BYTES, type PlacedLine } from "./backward-split.js";

export { CHUNK_BYTES, MAX_LINE_BYTES, type PlacedLine } from "./backward-split.js";

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
        lines.push(
          this.carried === 0 ? piece.toString("utf8") : Buffer.concat([...this.carry, piece]).toString("utf8"),
        );
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
  const search = new EndSearch((await handle.stat()).size);
  for (let length = search.step(); length > 0; length = search.step()) {
    const { bytesRead } = await handle.read(search.probe, 0, length, search.pos);
    const end = search.found(bytesRead);
    if (end !== null) return end;
  }
  return 0;
}

/**
 * The complete lines of `handle` before byte `end` (a line boundary), newest first, one chunk's worth per
 * step (the caller stops reading by leaving the loop). Lines longer than `maxLine` are skipped, and so are
 * lines holding `unwanted` (looked for in the bytes, so they are never decoded).
 */
export async function* linesBackward(
  handle: FileHandle,
  end: number,
  maxLine = MAX_LINE_BYTES,
  unwanted?: Buffer,
): AsyncGenerator<PlacedLine[]> {
  const split = new BackwardSplit(end, maxLine, unwanted);
  for (let length = split.step(); length > 0; length = split.step()) {
    const { bytesRead } = await handle.read(split.buffer, 0, length, split.pos);
    yield split.lines(bytesRead);
  }
}

/** openLog without the event loop (for a command that reads and exits): a descriptor, or null. */
export function openLogSync(file: string): number | null {
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    return null;
  }
  if (!fstatSync(fd).isFile()) {
    closeSync(fd);
    return null;
  }
  return fd;
}

/** completeEnd on a descriptor, read synchronously. */
export function completeEndSync(fd: number): number {
  const search = new EndSearch(fstatSync(fd).size);
  for (let length = search.step(); length > 0; length = search.step()) {
    const end = search.found(readSync(fd, search.probe, 0, length, search.pos));
    if (end !== null) return end;
  }
  return 0;
}

/** linesBackward on a descriptor, read synchronously. */
export function* linesBackwardSync(
  fd: number,
  end: number,
  maxLine = MAX_LINE_BYTES,
  unwanted?: Buffer,
): Generator<PlacedLine[]> {
  const split = new BackwardSplit(end, maxLine, unwanted);
  for (let length = split.step(); length > 0; length = split.step())
    yield split.lines(readSync(fd, split.buffer, 0, length, split.pos));
}
