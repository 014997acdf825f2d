// iter-NNN.stderr: what of iter-NNN.log the agent wrote to stderr, so `ralph logs --iteration N` shows it
// marked and in the order written. The log holds each stream's bytes a little late (its redactor keeps the
// last bytes back until it can tell they start no secret), so two things are kept: which bytes of the log
// are stderr's (`bytes START END`, END excluded) and where its lines came among the output's
// (`after J N`: N stderr lines were written once the output had J lines). Appended when the log is closed.
import { closeSync, existsSync, writeSync } from "node:fs";
import { openAppend, readRegular } from "./regular-file.js";

/** The most ranges and line groups kept; past that the rest of stderr reads as output, or comes last. */
const MAX_ENTRIES = 100_000;

/** The marks file beside an iteration's log. */
export function stderrMarksFile(logFile: string): string {
  return `${logFile.replace(/\.log$/, "")}.stderr`;
}

/** Where stderr is in a log: byte ranges [start, end, …] and line groups [after, count, …]. */
export interface StderrMarks {
  ranges: number[];
  order: number[];
}

/** Collects the marks as the log is written. */
export class StderrMarker {
  readonly marks: StderrMarks = { ranges: [], order: [] };
  private outputLines = 0;

  /** `length` bytes written to the log at `start`, from stderr or not. */
  bytes(start: number, length: number, fromStderr: boolean): void {
    if (!fromStderr || length === 0) return;
    const ranges = this.marks.ranges;
    if (ranges.at(-1) === start) ranges[ranges.length - 1] = start + length;
    else if (ranges.length < MAX_ENTRIES * 2) ranges.push(start, start + length);
  }

  /** A whole line written, from stderr or not. */
  line(fromStderr: boolean): void {
    if (!fromStderr) {
      this.outputLines += 1;
      return;
    }
    const order = this.marks.order;
    if (order.at(-2) === this.outputLines) order[order.length - 1] = (order.at(-1) ?? 0) + 1;
    else if (order.length < MAX_ENTRIES * 2) order.push(this.outputLines, 1);
  }

  /** Whether stderr wrote anything. */
  get any(): boolean {
    return this.marks.ranges.length > 0;
  }
}

/** Appends `marks` to the marks file. */
export function writeStderrMarks(file: string, marks: StderrMarks): void {
  const lines: string[] = [];
  for (let i = 0; i + 1 < marks.ranges.length; i += 2) lines.push(`bytes ${marks.ranges[i]} ${marks.ranges[i + 1]}\n`);
  for (let i = 0; i + 1 < marks.order.length; i += 2) lines.push(`after ${marks.order[i]} ${marks.order[i + 1]}\n`);
  const fd = openAppend(file);
  try {
    writeSync(fd, lines.join(""));
  } finally {
    closeSync(fd);
  }
}

/** The marks of a marks file; none when there is no file or it cannot be read. */
export function readStderrMarks(file: string): StderrMarks {
  const marks: StderrMarks = { ranges: [], order: [] };
  if (!existsSync(file)) return marks;
  let text: string;
  try {
    text = readRegular(file, 64 * 1024 * 1024).toString("latin1");
  } catch {
    return marks;
  }
  for (const line of text.split("\n")) {
    const match = /^(bytes|after) (\d+) (\d+)$/.exec(line);
    if (!match) continue;
    const first = Number(match[2]);
    const second = Number(match[3]);
    // Both only go forward: an entry out of order (a file edited by hand) is left out.
    if (match[1] === "bytes" && second > first && first >= (marks.ranges.at(-1) ?? 0)) marks.ranges.push(first, second);
    if (match[1] === "after" && second > 0 && first >= (marks.order.at(-2) ?? 0)) marks.order.push(first, second);
  }
  return marks;
}
