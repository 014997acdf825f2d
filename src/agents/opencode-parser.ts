// Reads `opencode run --format json` lines (step_start, text, tool_use, step_finish, error) into events and an outcome.
import { detectLimit, isAuthFailure, parseResetTime } from "./limit-detect.js";
import {
  firstLineFailure,
  type AgentFailure,
  type Json,
  StrayLines,
  applyFailure,
  asNumber,
  asRecord,
  asText,
} from "./json-fields.js";
import { clip } from "../util/clip.js";
import type { AgentEvent, AgentOutcome, OutputParser, TokenUsage } from "./types.js";

/** The first line of `opencode run`'s usage, which it prints when it refuses its arguments. */
const USAGE = /^opencode run \[message\.\.\]/;

const TEXT_LIMIT = 300;
const SUMMARY_LIMIT = 120;
const SUMMARY_FIELDS = ["command", "filePath", "path", "pattern", "url", "description", "prompt", "name"];

function summarize(input: unknown): string {
  const fields = asRecord(input);
  if (!fields) return "";
  const field = SUMMARY_FIELDS.find((name) => typeof fields[name] === "string");
  return clip((field ? (fields[field] as string) : JSON.stringify(fields)).replace(/\s+/g, " ").trim(), SUMMARY_LIMIT);
}

// The reset time an HTTP error's headers name: retry-after (seconds or a date) or retry-after-ms.
function resetFromHeaders(headers: Json | null, now: Date): Date | null {
  if (!headers) return null;
  const lower = new Map(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), asText(value)]));
  const ms = lower.get("retry-after-ms");
  if (ms) return parseResetTime(`retry-after-ms: ${ms}`, now);
  const after = lower.get("retry-after");
  if (!after) return null;
  if (/^\d+(\.\d+)?$/.test(after.trim())) return parseResetTime(`retry-after: ${after.trim()}`, now);
  const date = Date.parse(after);
  return Number.isNaN(date) ? null : new Date(date);
}

/** The kind of failure an OpenCode `error` line describes, with the limit when it is one. */
export function classifyOpencodeError(error: Json, now: Date): AgentFailure {
  const name = asText(error.name) || "Error";
  const data = asRecord(error.data) ?? {};
  const status = asNumber(data.statusCode);
  const text = [asText(data.message), asText(data.responseBody)].filter(Boolean).join("\n");
  const message = clip(`${name}: ${asText(data.message) || "no message"}`, TEXT_LIMIT);
  if (name === "ProviderAuthError" || status === 401 || status === 403) return { kind: "auth", message };
  const limit = status === 429 ? { message, resetAt: null } : detectLimit(text, now);
  if (limit) {
    const resetAt = resetFromHeaders(asRecord(data.responseHeaders), now) ?? parseResetTime(text, now);
    return { kind: "rate_limit", message, limit: { message, resetAt } };
  }
  if (isAuthFailure(text)) return { kind: "auth", message };
  return { kind: name === "APIError" || status !== undefined ? "api" : "other", message };
}

function addTokens(total: TokenUsage | undefined, tokens: Json): TokenUsage {
  const cache = asRecord(tokens.cache);
  return {
    input: (total?.input ?? 0) + (asNumber(tokens.input) ?? 0),
    output: (total?.output ?? 0) + (asNumber(tokens.output) ?? 0),
    cacheRead: (total?.cacheRead ?? 0) + (asNumber(cache?.read) ?? 0),
    cacheWrite: (total?.cacheWrite ?? 0) + (asNumber(cache?.write) ?? 0),
  };
}

/** A parser for one `opencode run --format json` run; `now` dates reset times (tests pass a fixed clock). */
export function createOpencodeParser(input: { prompt: string; now?: () => Date }): OutputParser {
  const now = input.now ?? (() => new Date());
  const stray = new StrayLines(TEXT_LIMIT);
  let sessionId: string | undefined;
  let tokens: TokenUsage | undefined;
  let cost: number | undefined;
  let steps = 0;
  let finalText: string[] = [];
  // OpenCode prints no end-of-run record: a step that finished for any reason but more tool calls is the end.
  let finished = false;
  let failure: AgentFailure | null = null;

  function onToolUse(part: Json): AgentEvent[] {
    const tool = asText(part.tool) || "tool";
    const state = asRecord(part.state) ?? {};
    finalText = [];
    finished = false;
    const events: AgentEvent[] = [{ kind: "tool_use", tool, text: summarize(state.input) }];
    if (state.status === "completed")
      events.push({ kind: "tool_result", tool, text: clip(asText(state.output), TEXT_LIMIT) });
    if (state.status === "error")
      events.push({ kind: "tool_result", tool, text: clip(`error: ${asText(state.error)}`, TEXT_LIMIT) });
    return events;
  }

  function onStepFinish(part: Json): AgentEvent[] {
    steps += 1;
    const stepTokens = asRecord(part.tokens);
    if (stepTokens) tokens = addTokens(tokens, stepTokens);
    const stepCost = asNumber(part.cost);
    if (stepCost !== undefined) cost = (cost ?? 0) + stepCost;
    const reason = asText(part.reason);
    finished = reason !== "tool-calls";
    return finished ? [{ kind: "result", text: finalText.join("\n"), ...(sessionId ? { sessionId } : {}) }] : [];
  }

  function onLine(line: Json): AgentEvent[] {
    if (typeof line.sessionID === "string" && !sessionId) sessionId = line.sessionID;
    const part = asRecord(line.part) ?? {};
    switch (line.type) {
      case "step_start":
        finished = false;
        return steps === 0 && sessionId ? [{ kind: "init", sessionId }] : [];
      case "text": {
        const text = asText(part.text);
        if (text === "") return [];
        finalText.push(text);
        return [{ kind: "text", text }];
      }
      case "reasoning":
        return [{ kind: "other", text: clip(asText(part.text), TEXT_LIMIT) }];
      case "tool_use":
        return onToolUse(part);
      case "step_finish":
        return onStepFinish(part);
      case "error": {
        failure = classifyOpencodeError(asRecord(line.error) ?? {}, now());
        finished = false;
        return [{ kind: "error", text: failure.message }];
      }
      default:
        return [{ kind: "other", text: String(line.type ?? "unknown") }];
    }
  }

  function failureWithoutEnd(
    stderrTail: string,
    exit: { code: number | null; signal: string | null },
  ): AgentFailure | null {
    const text = [...stray.lines, stderrTail].join("\n").trim();
    if (text && (detectLimit(text, now()) || isAuthFailure(text))) {
      const limit = detectLimit(text, now());
      const message = clip(limit?.message ?? text.split("\n")[0] ?? text, TEXT_LIMIT);
      return limit ? { kind: "rate_limit", message, limit } : { kind: "auth", message };
    }
    // Arguments it refuses make it print its usage and nothing else (no line naming the argument).
    if (exit.code !== 0 && USAGE.test(text))
      return {
        kind: "config",
        message: "OpenCode refused its arguments and printed its usage (check --agent-args and --model)",
      };
    return firstLineFailure(text, exit, TEXT_LIMIT);
  }

  return {
    line: (text: string): AgentEvent[] => stray.read(text, onLine),

    finish(stderrTail, exit): AgentOutcome {
      const reported = failure as AgentFailure | null;
      const outcome: AgentOutcome = {
        finalMessage: finished && !reported && finalText.length > 0 ? finalText.join("\n") : null,
        sawResult: finished || reported !== null,
      };
      if (sessionId) outcome.sessionId = sessionId;
      if (tokens) outcome.tokens = tokens;
      if (cost !== undefined) outcome.costUsd = cost;
      if (steps > 0) outcome.turns = steps;
      const cause = reported ?? (finished ? null : failureWithoutEnd(stderrTail, exit));
      applyFailure(outcome, cause);
      return outcome;
    },
  };
}
