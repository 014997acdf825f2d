// Reads Gemini CLI's `--output-format stream-json` lines (init, message, tool_use, tool_result, error, result).
import { summarizeToolInput } from "./claude-parser.js";
import { detectLimit, isAuthFailure, isConfigFailure } from "./limit-detect.js";
import { type AgentFailure, type Json, StrayLines, applyFailure, asNumber, asRecord, asText } from "./json-fields.js";
import { clip } from "../util/clip.js";
import type { AgentEvent, AgentOutcome, OutputParser, TokenUsage } from "./types.js";

const TEXT_LIMIT = 300;
// Google's wording for quota failures (measured with 0.61.0 against 429 RESOURCE_EXHAUSTED replies).
const QUOTA =
  /exhausted your (daily )?quota|exceeded your current quota|RESOURCE_EXHAUSTED|resource has been exhausted|quota exceeded|exhausted your capacity/i;
// Google's wording for a bad or missing key (400 INVALID_ARGUMENT API_KEY_INVALID, 403 PERMISSION_DENIED, 401 UNAUTHENTICATED).
const BAD_KEY =
  /API key not valid|API_KEY_INVALID|API key expired|PERMISSION_DENIED|UNAUTHENTICATED|GEMINI_API_KEY environment variable not found/i;
// Lines Gemini CLI prints on stderr on every run; they never explain a failure.
const STDERR_NOISE =
  /^(YOLO mode is enabled|Warning: 256-color|Ripgrep is not available|Approval mode overridden|Loaded cached credentials)/;
// eslint-disable-next-line no-control-regex
const ANSI = /\x1b\[[0-9;]*m/g;

/** The kind of failure a Gemini CLI error message describes, with the limit when it is one. */
export function classifyGeminiError(message: string, now: Date): AgentFailure {
  const text = message.replace(ANSI, "").trim();
  const short = clip(text, TEXT_LIMIT);
  if (BAD_KEY.test(text) || isAuthFailure(text)) return { kind: "auth", message: short };
  const limit = detectLimit(text, now);
  if (limit || QUOTA.test(text)) {
    // The shared parser finds "Please retry in 23.5s" and "Suggested retry after 60s."; a daily quota names no time.
    const info = { message: short, resetAt: limit?.resetAt ?? null };
    return { kind: "rate_limit", message: short, limit: info };
  }
  return {
    kind: /API Error|\bstatus\b|\b[45]\d\d\b|fetch failed|ECONN|ETIMEDOUT/i.test(text) ? "api" : "other",
    message: short,
  };
}

// Gemini reports input tokens including cached ones, and `input` as the uncached part.
function tokensFrom(stats: Json): TokenUsage {
  const cached = asNumber(stats.cached) ?? 0;
  const input = asNumber(stats.input) ?? Math.max(0, (asNumber(stats.input_tokens) ?? 0) - cached);
  return { input, output: asNumber(stats.output_tokens) ?? 0, cacheRead: cached, cacheWrite: 0 };
}

/** A parser for one Gemini CLI run; `now` dates reset times (tests pass a fixed clock). */
export function createGeminiParser(input: { prompt: string; now?: () => Date }): OutputParser {
  const now = input.now ?? (() => new Date());
  const toolNames = new Map<string, string>();
  const stray = new StrayLines(TEXT_LIMIT);
  let sessionId: string | undefined;
  let result: Json | null = null;
  // Text since the last tool call; the streamed deltas of one reply are joined without a separator.
  let finalText = "";
  let pending = "";
  let lastWarning: string | null = null;

  // Deltas are word-sized: they become one text event when something else arrives.
  function flush(): AgentEvent[] {
    if (pending === "") return [];
    const text = pending;
    pending = "";
    return [{ kind: "text", text }];
  }

  function onMessage(line: Json): AgentEvent[] {
    // The user message is the prompt echoed back: never part of the answer.
    if (line.role !== "assistant") return [];
    const text = asText(line.content);
    if (line.delta === true) {
      pending += text;
      finalText += text;
      return [];
    }
    const events = flush();
    finalText = finalText ? `${finalText}\n${text}` : text;
    return text ? [...events, { kind: "text", text }] : events;
  }

  function onToolUse(line: Json): AgentEvent[] {
    const tool = asText(line.tool_name) || "tool";
    if (typeof line.tool_id === "string") toolNames.set(line.tool_id, tool);
    finalText = "";
    return [...flush(), { kind: "tool_use", tool, text: summarizeToolInput(tool, line.parameters) }];
  }

  function onToolResult(line: Json): AgentEvent[] {
    const tool = typeof line.tool_id === "string" ? toolNames.get(line.tool_id) : undefined;
    const error = asRecord(line.error);
    const text =
      line.status === "error" || error
        ? `error: ${asText(error?.message) || asText(line.output)}`
        : asText(line.output) || asText(line.status);
    return [...flush(), { kind: "tool_result", text: clip(text, TEXT_LIMIT), ...(tool ? { tool } : {}) }];
  }

  function onLine(line: Json): AgentEvent[] {
    switch (line.type) {
      case "init":
        if (typeof line.session_id === "string") sessionId = line.session_id;
        return [{ kind: "init", ...(sessionId ? { sessionId } : {}), text: asText(line.model) }];
      case "message":
        return onMessage(line);
      case "tool_use":
        return onToolUse(line);
      case "tool_result":
        return onToolResult(line);
      case "error":
        lastWarning = asText(line.message);
        return [...flush(), { kind: "error", text: clip(lastWarning, TEXT_LIMIT) }];
      case "result": {
        result = line;
        const text =
          line.status === "success" ? finalText : asText(asRecord(line.error)?.message) || asText(line.status);
        return [...flush(), { kind: "result", text: clip(text, TEXT_LIMIT), ...(sessionId ? { sessionId } : {}) }];
      }
      default:
        return [...flush(), { kind: "other", text: String(line.type ?? "unknown") }];
    }
  }

  function failureWithoutResult(
    stderrTail: string,
    exit: { code: number | null; signal: string | null },
  ): AgentFailure | null {
    const lines = [...stray.lines, ...stderrTail.replace(ANSI, "").split("\n")]
      .map((line) => line.trim())
      .filter((line) => line !== "" && !STDERR_NOISE.test(line));
    const text = lines.join("\n");
    if (text && (detectLimit(text, now()) || isAuthFailure(text) || QUOTA.test(text) || BAD_KEY.test(text)))
      return classifyGeminiError(text, now());
    // Arguments it refused (it prints its usage after): no retry fixes them.
    const config = exit.code !== 0 ? lines.find(isConfigFailure) : undefined;
    if (config) return { kind: "config", message: clip(config, TEXT_LIMIT) };
    if (exit.code !== 0 && exit.signal === null && lines[0])
      return { kind: "other", message: clip(lines[0], TEXT_LIMIT) };
    const warning = lastWarning as string | null;
    return warning && exit.code !== 0 ? { kind: "other", message: clip(warning, TEXT_LIMIT) } : null;
  }

  return {
    line: (text: string): AgentEvent[] => stray.read(text, onLine, flush),

    finish(stderrTail, exit): AgentOutcome {
      const line = result as Json | null;
      const success = line?.status === "success";
      const outcome: AgentOutcome = {
        finalMessage: success && finalText !== "" ? finalText : null,
        sawResult: line !== null,
      };
      if (sessionId) outcome.sessionId = sessionId;
      const stats = asRecord(line?.stats);
      if (stats) outcome.tokens = tokensFrom(stats);
      let failure: AgentFailure | null = null;
      if (line && !success) {
        const error = asRecord(line.error);
        failure = classifyGeminiError(
          asText(error?.message) || `Gemini CLI ended with status ${String(line.status)}`,
          now(),
        );
      } else if (!line) {
        failure = failureWithoutResult(stderrTail, exit);
      }
      applyFailure(outcome, failure);
      return outcome;
    },
  };
}
