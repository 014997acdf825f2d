// What a run shows on a terminal: the shared toned lines (src/view) in terminal colours.
import pc from "picocolors";
import type { RunEvent } from "../store/event-log.js";
import {
  checksSkippedSegments,
  criterionSegments,
  iterationHeaderSegments,
  iterationSegments,
  liveSegments,
  promiseIgnoredSegments,
  reviewSegments,
  stderrTailSegments,
  type Segment,
  type Tone,
} from "../view/render-lines.js";
import { visible } from "../view/visible-text.js";

export { statusLine, tokenText, tokensOf } from "../view/render-lines.js";

const TONES: Record<Tone, (text: string) => string> = {
  plain: (text) => text,
  bold: pc.bold,
  tool: pc.cyan,
  dim: pc.dim,
  warn: pc.yellow,
  error: pc.red,
  done: pc.green,
};

/** A line's segments in terminal colours; the text in them (agent output, task titles) with its control characters shown. */
export function paint(segments: Segment[]): string {
  return segments.map((segment) => TONES[segment.tone](visible(segment.text))).join("");
}

const painted = (segments: Segment[] | null): string | null => (segments === null ? null : paint(segments));

/** The header printed when an iteration starts. */
export const iterationHeader = (event: RunEvent, maxIterations: number): string =>
  paint(iterationHeaderSegments(event, maxIterations));
/** The line summing up a finished iteration; `spend` is the run's total, or null when the agent reports no cost. */
export const iterationLine = (event: RunEvent, maxIterations: number, spend: number | null): string =>
  paint(iterationSegments(event, maxIterations, spend));
/** Why a promise in the final message did not end the run, or null. */
export const promiseIgnoredLine = (event: RunEvent): string | null => painted(promiseIgnoredSegments(event));
/** A failed iteration's last stderr lines, or null. */
export const stderrTailLine = (event: RunEvent): string | null => painted(stderrTailSegments(event));
/** Why the completion checks did not run, or null. */
export const checksSkippedLine = (event: RunEvent): string | null => painted(checksSkippedSegments(event));
/** One completion check's verdict. */
export const criterionLine = (event: RunEvent): string => paint(criterionSegments(event));
/** One reviewer's verdict. */
export const reviewLine = (event: RunEvent): string => paint(reviewSegments(event));
/** An agent event as --live shows it, or null for events that show nothing. */
export const liveLine = (event: RunEvent): string | null => painted(liveSegments(event));
