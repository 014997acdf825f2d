// Token use of an in-session loop, read from Claude Code's session transcript (JSONL): the hook input
// carries no usage, but every assistant line of the transcript records its API call's.
import { readFileSync } from "node:fs";

/** Tokens used since a moment by kind (input without the cached part), and the cost when the transcript states one. */
export interface TranscriptUsage {
  tokens: { input: number; output: number; cacheRead: number; cacheWrite: number };
  /** Summed `costUSD` fields; null when no line carries one (Claude Code 2.x writes none). */
  costUsd: number | null;
  /** The model of the last call (ralph prices the tokens by it when no cost is stated). */
  model: string | null;
}

type Json = Record<string, unknown>;
const num = (value: unknown): number => (typeof value === "number" && Number.isFinite(value) ? value : 0);

/**
 * Sums the usage of every assistant API call in the transcript from `since` on (all when null). A call's
 * usage repeats on each line of its message (one per content block): each message id counts once, with
 * its last line's numbers. Returns null when the transcript cannot be read.
 */
export function readTranscriptUsage(transcriptPath: string, since: Date | null): TranscriptUsage | null {
  let text: string;
  try {
    text = readFileSync(transcriptPath, "utf8");
  } catch {
    return null;
  }
  const calls = new Map<
    string,
    { input: number; output: number; cacheRead: number; cacheWrite: number; cost: number | null }
  >();
  let model: string | null = null;
  for (const line of text.split("\n")) {
    if (!line.includes('"assistant"')) continue;
    let entry: Json;
    try {
      entry = JSON.parse(line) as Json;
    } catch {
      continue;
    }
    if (entry.type !== "assistant" || typeof entry.message !== "object" || entry.message === null) continue;
    const at = typeof entry.timestamp === "string" ? Date.parse(entry.timestamp) : Number.NaN;
    if (since !== null && Number.isFinite(at) && at < since.getTime()) continue;
    const message = entry.message as Json;
    const usage = (message.usage ?? {}) as Json;
    const id = typeof message.id === "string" ? message.id : `line-${calls.size}`;
    calls.set(id, {
      input: num(usage.input_tokens),
      output: num(usage.output_tokens),
      cacheRead: num(usage.cache_read_input_tokens),
      cacheWrite: num(usage.cache_creation_input_tokens),
      cost: typeof entry.costUSD === "number" ? entry.costUSD : null,
    });
    if (typeof message.model === "string" && message.model !== "" && message.model !== "<synthetic>")
      model = message.model;
  }
  const total: TranscriptUsage = { tokens: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, costUsd: null, model };
  for (const call of calls.values()) {
    total.tokens.input += call.input;
    total.tokens.output += call.output;
    total.tokens.cacheRead += call.cacheRead;
    total.tokens.cacheWrite += call.cacheWrite;
    if (call.cost !== null) total.costUsd = (total.costUsd ?? 0) + call.cost;
  }
  return total;
}
