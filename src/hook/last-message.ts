// The session's last assistant message, read from Claude Code's transcript (JSONL) when the hook input lacks it.
import { closeSync, fstatSync, openSync, readSync } from "node:fs";

/** How long to wait for a transcript that has not been flushed yet. */
export interface TranscriptRetry {
  attempts: number;
  delayMs: number;
}

/** Default: up to ~2 s, enough for Claude Code to flush the message it has just shown. */
export const DEFAULT_TRANSCRIPT_RETRY: TranscriptRetry = { attempts: 20, delayMs: 100 };

// The last message is at the end; a long session's transcript can be many megabytes.
const TAIL_BYTES = 512 * 1024;

/** One assistant message found in the transcript. */
export interface TranscriptMessage {
  text: string;
  timestamp: Date | null;
}

/**
 * The text of the last assistant message newer than `since`. The transcript may lag behind the stop
 * by a few milliseconds, so an older (or no) last message is retried before giving up with null.
 */
export async function readLastAssistantMessage(
  transcriptPath: string,
  since: Date | null,
  retry: TranscriptRetry = DEFAULT_TRANSCRIPT_RETRY,
): Promise<string | null> {
  const found = await readUntilFresh(transcriptPath, since, retry, (tail) => {
    const message = lastAssistantMessage(tail);
    return message === null ? undefined : { value: message.text, at: message.timestamp };
  });
  return found ?? null;
}

/**
 * Waits (bounded) until the transcript holds an assistant entry, of any content, newer than `since`: the
 * API call of the turn that has just stopped, whose usage is then summed.
 */
export async function waitForTranscript(
  transcriptPath: string,
  since: Date | null,
  retry: TranscriptRetry = DEFAULT_TRANSCRIPT_RETRY,
): Promise<void> {
  await readUntilFresh(transcriptPath, since, retry, (tail) => {
    const at = lastAssistantTime(tail);
    return at === undefined ? undefined : { value: true, at };
  });
}

/**
 * Reads the transcript's tail until `pick` finds something written at or after `since` (an entry without a
 * time counts as fresh), up to `retry.attempts` reads; its value, or undefined.
 */
async function readUntilFresh<T>(
  transcriptPath: string,
  since: Date | null,
  retry: TranscriptRetry,
  pick: (tail: string) => { value: T; at: Date | null } | undefined,
): Promise<T | undefined> {
  for (let attempt = 0; ; attempt++) {
    const found = pick(readTail(transcriptPath));
    if (found !== undefined && (since === null || found.at === null || found.at.getTime() >= since.getTime()))
      return found.value;
    if (attempt + 1 >= retry.attempts) return undefined;
    await new Promise((resolve) => setTimeout(resolve, retry.delayMs));
  }
}

/** When the last assistant entry in JSONL `text` was written: undefined without one, null when it says no time. */
function lastAssistantTime(text: string): Date | null | undefined {
  const lines = text.split("\n");
  for (let i = lines.length - 1; i >= 0; i--) {
    const entry = parseLine(lines[i] ?? "");
    if (entry?.type !== "assistant") continue;
    const at = typeof entry.timestamp === "string" ? new Date(entry.timestamp) : null;
    return at && !Number.isNaN(at.getTime()) ? at : null;
  }
  return undefined;
}

function readTail(file: string): string {
  let fd: number;
  try {
    fd = openSync(file, "r");
  } catch {
    return "";
  }
  try {
    const size = fstatSync(fd).size;
    const length = Math.min(size, TAIL_BYTES);
    const buffer = Buffer.alloc(length);
    readSync(fd, buffer, 0, length, size - length);
    return buffer.toString("utf8");
  } finally {
    closeSync(fd);
  }
}

/**
 * The last assistant message in JSONL `text`. Claude Code writes one line per content block of a message,
 * all with the same message id, so the text blocks of the trailing lines sharing that id are joined.
 * A partly written last line is skipped.
 */
export function lastAssistantMessage(text: string): TranscriptMessage | null {
  const lines = text.split("\n");
  let id: string | null = null;
  let timestamp: Date | null = null;
  const parts: string[] = [];
  for (let i = lines.length - 1; i >= 0; i--) {
    const entry = parseLine(lines[i] ?? "");
    if (!entry || entry.type !== "assistant") {
      if (id !== null && entry?.type === "user") break;
      continue;
    }
    const message = asRecord(entry.message);
    const messageId = typeof message?.id === "string" ? message.id : null;
    const texts = textBlocks(message?.content);
    if (id === null) {
      if (texts.length === 0) continue;
      id = messageId ?? "";
      const ts = typeof entry.timestamp === "string" ? new Date(entry.timestamp) : null;
      timestamp = ts && !Number.isNaN(ts.getTime()) ? ts : null;
    } else if (messageId !== id) {
      break;
    }
    parts.unshift(...texts);
  }
  return id === null ? null : { text: parts.join("\n"), timestamp };
}

function parseLine(line: string): Record<string, unknown> | null {
  if (line.trim() === "") return null;
  try {
    return asRecord(JSON.parse(line));
  } catch {
    return null;
  }
}

function asRecord(value: unknown): Record<string, unknown> | null {
  return value !== null && typeof value === "object" && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : null;
}

function textBlocks(content: unknown): string[] {
  if (typeof content === "string") return [content];
  if (!Array.isArray(content)) return [];
  return content
    .map((block) => asRecord(block))
    .filter((block) => block?.type === "text" && typeof block.text === "string")
    .map((block) => block?.text as string);
}
