// Run files are regular files or errors: no following symbolic links, no blocking on FIFOs or devices.
import { closeSync, constants, fstatSync, lstatSync, openSync, readSync, type Stats } from "node:fs";

/** A run file that is not what it should be (a link, a FIFO, a device, too large): its message names it. */
export class RunFileError extends Error {
  override readonly name = "RunFileError";
}

/** Flags every run file is opened with: never through a link, never waiting for a FIFO's other end. */
const SAFE = constants.O_NOFOLLOW | constants.O_NONBLOCK;

function kindOf(stat: Stats): string {
  if (stat.isFIFO()) return "a FIFO";
  if (stat.isDirectory()) return "a directory";
  if (stat.isCharacterDevice() || stat.isBlockDevice()) return "a device";
  if (stat.isSocket()) return "a socket";
  if (stat.isSymbolicLink()) return "a symbolic link";
  return "not a regular file";
}

/**
 * Opens `file` with `flags` (O_* constants) plus no-follow and non-blocking, and refuses anything but a
 * regular file. A FIFO opened non-blocking returns at once and is refused by fstat, instead of blocking
 * the process in a synchronous open that no signal can interrupt.
 */
export function openRegular(file: string, flags: number, mode = 0o600): number {
  return openRegularStat(file, flags, mode).fd;
}

/** openRegular, with the file's fstat. */
function openRegularStat(file: string, flags: number, mode = 0o600): { fd: number; stat: Stats } {
  let fd: number;
  try {
    fd = openSync(file, flags | SAFE, mode);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ELOOP") throw new RunFileError(`${file}: is a symbolic link; ralph does not follow links here`);
    if (code === "ENXIO") throw new RunFileError(`${file}: is a FIFO or socket, not a regular file`);
    throw error;
  }
  const stat = fstatSync(fd);
  if (!stat.isFile()) {
    closeSync(fd);
    throw new RunFileError(`${file}: is ${kindOf(stat)}, not a regular file`);
  }
  return { fd, stat };
}

/** Reads a whole regular file as bytes; more than `maxBytes` is refused rather than read. */
export function readRegular(file: string, maxBytes = 64 * 1024 * 1024): Buffer {
  const { fd, stat } = openRegularStat(file, constants.O_RDONLY);
  try {
    const size = stat.size;
    if (size > maxBytes) throw new RunFileError(`${file}: is ${size} bytes, more than the ${maxBytes} allowed`);
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      // Not zeroed: only the bytes read are kept. One byte more than the size: a file that grew is seen.
      const chunk = Buffer.allocUnsafe(Math.max(4096, size - total + 1));
      const read = readSync(fd, chunk, 0, chunk.length, null);
      if (read === 0) break;
      total += read;
      if (total > maxBytes) throw new RunFileError(`${file}: is more than the ${maxBytes} bytes allowed`);
      chunks.push(chunk.subarray(0, read));
      // A regular file read short is at its end: no second read to be told so (a listing reads thousands).
      if (read < chunk.length) break;
    }
    return chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, total);
  } finally {
    closeSync(fd);
  }
}

/** One buffer for readRegularText's reads: a listing reads thousands of small files, each decoded at once. */
const shared = Buffer.allocUnsafe(64 * 1024);

/**
 * readRegular's text (UTF-8), for a small file read and decoded at once: a file that fits in one read is
 * decoded from a buffer kept for the purpose, with no buffer made for it (listing 10,000 runs made 10,000).
 */
export function readRegularText(file: string, maxBytes = 64 * 1024 * 1024): string {
  const { fd, stat } = openRegularStat(file, constants.O_RDONLY);
  try {
    if (stat.size > maxBytes)
      throw new RunFileError(`${file}: is ${stat.size} bytes, more than the ${maxBytes} allowed`);
    if (stat.size < shared.length && stat.size < maxBytes) {
      const read = readSync(fd, shared, 0, shared.length, null);
      // Read short: the whole file (one that grew past the buffer since fstat is read again below).
      if (read < shared.length && read <= maxBytes) return shared.toString("utf8", 0, read);
    }
  } finally {
    closeSync(fd);
  }
  return readRegular(file, maxBytes).toString("utf8");
}

/** Opens a regular file for appending (created 0600 when missing), never through a link. */
export function openAppend(file: string): number {
  return openRegular(file, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT);
}

/** What is at `path` without following a link: "missing", "link", "directory", "file" or "other". */
export function entryKind(path: string): "missing" | "link" | "directory" | "file" | "other" {
  let stat: Stats | undefined;
  try {
    // No exception for the common case, a missing STOP, PAUSE or ANSWER: the loop asks several times an iteration.
    stat = lstatSync(path, { throwIfNoEntry: false });
  } catch {
    return "missing";
  }
  if (stat === undefined) return "missing";
  if (stat.isSymbolicLink()) return "link";
  if (stat.isDirectory()) return "directory";
  return stat.isFile() ? "file" : "other";
}
