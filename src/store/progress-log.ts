// progress.txt: append-only key=value lines, a block per iteration, ended by the completion marker.
import { closeSync, constants, readSync, fstatSync } from "node:fs";
import { appendWhole } from "./append-whole.js";
import { openRegular } from "./regular-file.js";
import type { ExitReason } from "../exit/exit-reasons.js";

/** One key=value block; values are written on one line (newlines are escaped). */
export type ProgressBlock = ReadonlyArray<readonly [string, string | number | boolean | null | undefined]>;

/** The last line of every ended run's progress.txt. */
export const COMPLETION_MARKER = "promise=COMPLETE";

function oneLine(value: string | number | boolean): string {
  return String(value).replace(/\\/g, "\\\\").replace(/\r/g, "\\r").replace(/\n/g, "\\n");
}

/** Appends a block of key=value lines followed by a blank line; empty values are left out. */
export function appendProgress(file: string, block: ProgressBlock): void {
  const lines = block
    .filter(([, value]) => value !== undefined && value !== null && value !== "")
    .map(([key, value]) => `${key}=${oneLine(value as string | number | boolean)}`);
  appendWhole(file, `${lines.join("\n")}\n\n`);
}

/** Appends the completion marker: `completion_reason=<REASON>` then `promise=COMPLETE`, as the last two lines. */
export function appendCompletionMarker(file: string, reason: ExitReason): void {
  appendWhole(file, `completion_reason=${reason}\n${COMPLETION_MARKER}\n`);
}

/**
 * Marks a run whose runner died without ending it INTERRUPTED (the guardian's last word), after any marker
 * already there but one saying INTERRUPTED: a marker in progress.txt may be the agent's, forged.
 */
export function markInterrupted(file: string): void {
  if (readCompletion(file).reason !== "INTERRUPTED") appendCompletionMarker(file, "INTERRUPTED");
}

/** Reads the end of progress.txt (cheap on long runs) and returns the exit reason when the run has ended. */
export function readCompletion(file: string): { ended: boolean; reason: string | null } {
  let fd: number;
  try {
    fd = openRegular(file, constants.O_RDONLY);
  } catch {
    return { ended: false, reason: null };
  }
  try {
    const size = fstatSync(fd).size;
    const length = Math.min(size, 512);
    const buffer = Buffer.alloc(length);
    readSync(fd, buffer, 0, length, size - length);
    const lines = buffer.toString("utf8").trimEnd().split("\n");
    if (lines.at(-1) !== COMPLETION_MARKER) return { ended: false, reason: null };
    const reasonLine = lines.at(-2) ?? "";
    return { ended: true, reason: reasonLine.startsWith("completion_reason=") ? reasonLine.slice(18) : null };
  } finally {
    closeSync(fd);
  }
}

/**
 * Retries the completion marker every `intervalMs` until it is written (true), `signal` aborts, or
 * `timeoutMs` passes (false): a full disk delays the marker, it does not lose it.
 */
export async function holdCompletionMarker(
  file: string,
  reason: ExitReason,
  signal: AbortSignal,
  intervalMs = 250,
  timeoutMs = 10 * 60_000,
): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!signal.aborted && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
    try {
      if (!readCompletion(file).ended) appendCompletionMarker(file, reason);
      return true;
    } catch {
      // still no room: try again
    }
  }
  return false;
}
