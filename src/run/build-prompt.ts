// Builds what is given to the agent: the prompt from state.md, the current task, failing-check context, and
// the answer to the agent's last question.

/** What goes into one iteration's prompt besides the user's text. */
export interface PromptParts {
  /** The user's prompt, as bytes (never decoded, so any encoding passes through unchanged). */
  prompt: Buffer;
  task: string | null;
  failingChecks: string;
  /** The findings of a review that did not approve the last iteration. */
  reviewFindings?: string;
  /** The question the agent asked last iteration and the person's answer to it. */
  answered?: { question: string; answer: string } | null;
}

const TASK_SLOT = Buffer.from("{{task}}");
const NEWLINE = 0x0a;

/** The bytes of one iteration's prompt; `{{task}}` in the prompt is replaced, otherwise the task is appended. */
export function buildPrompt(parts: PromptParts): Buffer {
  let bytes = parts.prompt;
  if (parts.task !== null) {
    bytes = bytes.includes(TASK_SLOT)
      ? replaceAll(bytes, TASK_SLOT, Buffer.from(parts.task))
      : Buffer.concat([
          bytes,
          Buffer.from(
            `${bytes.at(-1) === NEWLINE || bytes.length === 0 ? "" : "\n"}\n## Current task\n\n${parts.task}\n`,
          ),
        ]);
  }
  if (parts.failingChecks !== "") {
    bytes = Buffer.concat([
      bytes,
      Buffer.from(
        `${bytes.at(-1) === NEWLINE ? "" : "\n"}\n## Completion checks that failed last iteration\n\n${parts.failingChecks}\n`,
      ),
    ]);
  }
  if (parts.reviewFindings) {
    bytes = Buffer.concat([
      bytes,
      Buffer.from(
        `${bytes.at(-1) === NEWLINE ? "" : "\n"}\n## Review of your last iteration\n\n${parts.reviewFindings}\n\nAddress these findings before you claim the work is done again.\n`,
      ),
    ]);
  }
  if (parts.answered) {
    const { question, answer } = parts.answered;
    bytes = Buffer.concat([
      bytes,
      Buffer.from(
        `${bytes.at(-1) === NEWLINE ? "" : "\n"}\n## Your question and the answer\n\nYou asked: ${question}\n\nAnswer: ${answer}\n`,
      ),
    ]);
  }
  return bytes;
}

function replaceAll(bytes: Buffer, slot: Buffer, value: Buffer): Buffer {
  const pieces: Buffer[] = [];
  let from = 0;
  for (let at = bytes.indexOf(slot); at !== -1; at = bytes.indexOf(slot, from)) {
    pieces.push(bytes.subarray(from, at), value);
    from = at + slot.length;
  }
  pieces.push(bytes.subarray(from));
  return Buffer.concat(pieces);
}
