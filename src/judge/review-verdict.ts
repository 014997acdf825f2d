// Judges a reviewer's final message: it must end with `<verdict>approve</verdict>` or `<verdict>changes</verdict>`,
// by the rules the promise is judged by (claim.ts): a tag in quotes, in code, negated, or echoed from the
// prompt is no verdict, and only the last tag, with nothing but whitespace after it, counts.
import { normaliseNewlines, tagJudge } from "./claim.js";

/** What a reviewer's message says. `none`: no verdict that counts (the reason says why). */
export type ReviewVerdict =
  { verdict: "approve" | "changes"; findings: string } | { verdict: "none"; reason: string; findings: string };

const TAG = /<verdict>\s*([^<]*?)\s*<\/verdict>/g;
/** The most of a reviewer's findings kept for the next prompt and the event. */
export const FINDINGS_LIMIT = 8000;

/** The verdict at the end of `message`; `prompt` is what the reviewer was given (an echo of it is no verdict). */
export function judgeReview(message: string, prompt: string): ReviewVerdict {
  const text = normaliseNewlines(message);
  const tags = [...text.matchAll(TAG)];
  const last = tags.at(-1);
  if (last === undefined)
    return { verdict: "none", reason: "the reviewer's answer has no <verdict> tag", findings: findingsOf(text) };
  const start = last.index;
  const end = start + last[0].length;
  const findings = findingsOf(text.slice(0, start));
  if (text.slice(end).trim() !== "")
    return {
      verdict: "none",
      reason: "the last <verdict> tag is not at the end of the reviewer's answer",
      findings: findingsOf(text),
    };
  const word = (last[1] ?? "").toLowerCase();
  if (word !== "approve" && word !== "changes")
    return {
      verdict: "none",
      reason: `the verdict ${JSON.stringify(last[1])} is neither approve nor changes`,
      findings,
    };
  const judged = tagJudge(text, prompt)(start, end);
  if (!judged.found)
    return {
      verdict: "none",
      reason: `the closing <verdict> tag does not count: ${judged.detail ?? judged.reason}`,
      findings,
    };
  return { verdict: word, findings };
}

/** The findings as the next prompt carries them: trimmed, and cut from the front when too long. */
function findingsOf(text: string): string {
  const trimmed = text.trim();
  return trimmed.length > FINDINGS_LIMIT ? `…${trimmed.slice(trimmed.length - FINDINGS_LIMIT + 1)}` : trimmed;
}
