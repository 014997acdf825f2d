// The control files of a run: what `ralph stop`, `pause`, `resume` and `answer` and the dashboard change.
// Sentinels are replaced, never written through: a STOP or PAUSE that is a link is swapped for a file,
// its target untouched.
import { renameSync, unlinkSync } from "node:fs";
import { writeFileAtomic } from "../store/atomic-write.js";
import { entryKind, readRegular } from "../store/regular-file.js";
import type { RunPaths } from "../store/run-paths.js";
import { answerSetRequest, pendingSetRequests } from "./set-request.js";

/** Creates STOP: the run ends at the next boundary, or with `now` the runner ends the agent at once. */
export function requestStop(paths: RunPaths, now: boolean): void {
  writeFileAtomic(paths.stop, now ? "now\n" : "stop\n", 0o600, false);
}

/** Creates PAUSE: the run waits before its next iteration. */
export function requestPause(paths: RunPaths): void {
  writeFileAtomic(paths.pause, "pause\n", 0o600, false);
}

/** Removes PAUSE, whatever kind of entry it is. */
export function clearPause(paths: RunPaths): void {
  if (entryKind(paths.pause) !== "missing") unlinkSync(paths.pause);
}

/** The largest answer `ralph answer` takes, in bytes. */
export const MAX_ANSWER_BYTES = 16 * 1024;

/** Writes ANSWER: the runner takes it as the answer to the run's open question (also after `ralph continue`). */
export function writeAnswer(paths: RunPaths, answer: string): void {
  writeFileAtomic(paths.answer, answer, 0o600, false);
}

/** The answer in ANSWER (trimmed), or null when there is none, it is empty, too large, or not a regular file. */
export function readAnswer(paths: RunPaths): string | null {
  if (entryKind(paths.answer) !== "file") return null;
  try {
    const text = readRegular(paths.answer, MAX_ANSWER_BYTES).toString("utf8").trim();
    return text === "" ? null : text;
  } catch {
    return null;
  }
}

/** Removes ANSWER, whatever kind of entry it is. */
export function clearAnswer(paths: RunPaths): void {
  if (entryKind(paths.answer) !== "missing") unlinkSync(paths.answer);
}

/** What the sentinels ask for right now. */
export interface SentinelState {
  stop: boolean;
  stopNow: boolean;
  pause: boolean;
  /** The answer in ANSWER, when one is there. */
  answer: string | null;
}

/**
 * Reads the sentinels (cheap: two lstats and, when STOP exists, one small read). Presence is the request,
 * whatever the entry is; only a regular STOP file is read (a FIFO there must not block the runner).
 */
export function readSentinels(paths: RunPaths): SentinelState {
  const stop = entryKind(paths.stop) !== "missing";
  let stopNow = false;
  if (stop) {
    try {
      stopNow = /^\s*now\b/m.test(readRegular(paths.stop, 4096).toString("utf8"));
    } catch {
      stopNow = false;
    }
  }
  return { stop, stopNow, pause: entryKind(paths.pause) !== "missing", answer: readAnswer(paths) };
}

/** Moves an old STOP aside (kept, with the time in its name) so that a continued run does not stop at once. */
export function archiveStop(paths: RunPaths, now: Date): void {
  if (entryKind(paths.stop) !== "missing")
    renameSync(paths.stop, `${paths.stop}.${now.toISOString().replace(/[:.]/g, "-")}`);
}

/**
 * Removes the requests found in the run's requests directory right after an agent's tree has ended: written while
 * the agent ran, they may be the agent's own (an ANSWER to its own question, a set request naming some
 * other process), so none is taken. Returns the names of the files removed.
 */
export function discardAgentTimeRequests(paths: RunPaths): string[] {
  const removed: string[] = [];
  if (entryKind(paths.answer) !== "missing") {
    clearAnswer(paths);
    removed.push("ANSWER");
  }
  for (const { name } of pendingSetRequests(paths.requests)) {
    answerSetRequest(paths.requests, name, { ok: false, message: "refused: written while the agent ran; ask again" });
    removed.push(`requests/set-${name}.request.json`);
  }
  return removed;
}
