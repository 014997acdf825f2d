// Decides whether an agent's final message asks a person a question with `<ask>QUESTION</ask>`.
//
// Judged as strictly as the promise (claim.ts): only the final message is looked at, and a tag that is
// echoed from the prompt, inside Markdown code, quoted, negated or a statement of intent ("if I get stuck
// I will write <ask>…</ask>") is not a question. On top of that the tag must end the message: only
// whitespace may follow the last `</ask>`, so a question mentioned in passing never stops a run.
import { normaliseNewlines, tagJudge, type ClaimVerdict } from "./claim.js";

/** Whether a final message asks a question, and which. */
export type AskVerdict =
  | { found: true; question: string }
  | {
      found: false;
      reason: Exclude<ClaimVerdict["reason"], "found" | "bare_phrase"> | "not_at_end" | "empty";
      detail: string;
    };

const TAG = /<ask>((?:(?!<ask>)[\s\S])*?)<\/ask>/g;
/** Longer questions are cut here (with an ellipsis): they go into events, status.json and the next prompt. */
export const MAX_QUESTION_CHARS = 2000;

/** The question the final message ends with, or why there is none; `prompt` is the prompt the agent was given. */
export function findAsk(finalMessage: string, prompt?: string): AskVerdict {
  const message = normaliseNewlines(finalMessage);
  const last = [...message.matchAll(TAG)].at(-1);
  if (!last) return { found: false, reason: "absent", detail: "no <ask> tag" };
  const end = last.index + last[0].length;
  const verdict = tagJudge(message, prompt)(last.index, end);
  if (!verdict.found) {
    const reason = verdict.reason === "found" || verdict.reason === "bare_phrase" ? "absent" : verdict.reason;
    return { found: false, reason, detail: (verdict.detail ?? "").replace("the tag", "the <ask> tag") };
  }
  if (message.slice(end).trim() !== "")
    return { found: false, reason: "not_at_end", detail: "the message goes on after the <ask> tag" };
  const question = (last[1] ?? "").trim();
  if (question === "") return { found: false, reason: "empty", detail: "the <ask> tag is empty" };
  return {
    found: true,
    question: question.length > MAX_QUESTION_CHARS ? `${question.slice(0, MAX_QUESTION_CHARS)}…` : question,
  };
}
