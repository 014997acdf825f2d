// Reads `codex exec --json` lines (thread.started, item.*, turn.completed/failed, error) into events and an outcome.
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

const TEXT_LIMIT = 300;
const SUMMARY_LIMIT = 120;
// "Reconnecting... 2/5 (<the failure>)": Codex is retrying a failed request.
const RETRY_NOTICE = /^Reconnecting\.\.\.\s*\d+\/\d+\s*\(([\s\S]*)\)\s*$/;
// What Codex prints for a failed model request (measured with 0.171.0): "unexpected status 500 …",
// "exceeded retry limit, last status: 429 …", "stream disconnected before completion …", "high demand".
const API_FAILURE =
  /\bstatus\b|\bstream\b|\brequest\b|\bserver\b|\bdemand\b|\bconnect|\btimed? ?out\b|\boverloaded\b|\bhttps?:\/\//i;

function oneLine(text: string, limit: number): string {
  return clip(text.replace(/\s+/g, " ").trim(), limit);
}

/**
 * The reset time of a Codex usage-limit message. Codex writes it in local time as "try again at 5:46 PM"
 * (today) or "try again at Mar 17th, 2030 5:46 PM"; the shared parser reads it once worded as "resets …".
 */
export function codexResetTime(text: string, now: Date): Date | null {
  const reworded = text
    .replace(/\btry again at\s+/i, "resets ")
    .replace(/\b([A-Za-z]{3,9}\.? \d{1,2})(?:st|nd|rd|th)\b/, "$1");
  return parseResetTime(reworded, now);
}

/** The kind of failure a Codex error message describes, with the limit when it is one. */
export function classifyCodexError(message: string, now: Date): AgentFailure {
  const text = message.trim();
  const limit = detectLimit(text, now);
  if (limit) {
    const info = { message: clip(text, TEXT_LIMIT), resetAt: codexResetTime(text, now) ?? limit.resetAt };
    return { kind: "rate_limit", message: info.message, limit: info };
  }
  if (isAuthFailure(text)) return { kind: "auth", message: clip(text, TEXT_LIMIT) };
  return { kind: API_FAILURE.test(text) ? "api" : "other", message: clip(text, TEXT_LIMIT) };
}

const TOOL_ITEMS: Record<string, string> = {
  command_execution: "shell",
  file_change: "apply_patch",
  web_search: "web_search",
};

// The tool name an item stands for, or null for items that are not tool calls.
function toolOf(item: Json): string | null {
  if (item.type === "mcp_tool_call") return [asText(item.server), asText(item.tool)].filter(Boolean).join(".") || "mcp";
  return TOOL_ITEMS[asText(item.type)] ?? null;
}

function describeCall(item: Json): string {
  if (item.type === "command_execution") return oneLine(asText(item.command), SUMMARY_LIMIT);
  if (item.type === "web_search") return oneLine(asText(item.query), SUMMARY_LIMIT);
  if (item.type === "file_change" && Array.isArray(item.changes)) {
    const changes = item.changes
      .map(asRecord)
      .map((change) => `${asText(change?.kind)} ${asText(change?.path)}`.trim());
    return oneLine(changes.join(", "), SUMMARY_LIMIT);
  }
  return oneLine(JSON.stringify(item.arguments ?? {}), SUMMARY_LIMIT);
}

function describeResult(item: Json): string {
  const failed = item.status === "failed" || item.status === "declined";
  if (item.type === "command_execution") {
    const exit = asNumber(item.exit_code);
    const prefix = exit !== undefined && exit !== 0 ? `exit ${exit}: ` : failed ? "error: " : "";
    return clip(`${prefix}${asText(item.aggregated_output)}`, TEXT_LIMIT);
  }
  if (item.type === "mcp_tool_call" && asRecord(item.error))
    return clip(`error: ${asText(asRecord(item.error)?.message)}`, TEXT_LIMIT);
  return failed ? `error: ${String(item.status)}` : String(item.status ?? "completed");
}

function addUsage(total: TokenUsage | undefined, usage: Json): TokenUsage {
  const cached = asNumber(usage.cached_input_tokens) ?? 0;
  // OpenAI counts cached input inside input_tokens; TokenUsage keeps them apart, as Claude Code reports them.
  const input = Math.max(0, (asNumber(usage.input_tokens) ?? 0) - cached);
  return {
    input: (total?.input ?? 0) + input,
    output: (total?.output ?? 0) + (asNumber(usage.output_tokens) ?? 0),
    cacheRead: (total?.cacheRead ?? 0) + cached,
    cacheWrite: (total?.cacheWrite ?? 0) + (asNumber(usage.cache_write_input_tokens) ?? 0),
  };
}

/** A parser for one `codex exec --json` run; `now` dates reset times (tests pass a fixed clock). */
export function createCodexParser(input: { prompt: string; now?: () => Date }): OutputParser {
  const now = input.now ?? (() => new Date());
  const started = new Set<string>();
  const stray = new StrayLines(TEXT_LIMIT);
  let sessionId: string | undefined;
  let tokens: TokenUsage | undefined;
  let messages: string[] = [];
  let completed = false;
  let failed: string | null = null;
  let lastError: string | null = null;

  function onItem(phase: string, item: Json): AgentEvent[] {
    const id = asText(item.id);
    const tool = toolOf(item);
    if (tool) {
      // Anything the agent says before a tool call is a preamble, not its final message.
      messages = [];
      const events: AgentEvent[] = [];
      if (!started.has(id)) {
        started.add(id);
        events.push({ kind: "tool_use", tool, text: describeCall(item) });
      }
      if (phase === "item.completed") events.push({ kind: "tool_result", tool, text: describeResult(item) });
      return events;
    }
    if (phase !== "item.completed") return [];
    switch (item.type) {
      case "agent_message":
        messages.push(asText(item.text));
        return [{ kind: "text", text: asText(item.text) }];
      case "reasoning":
        return [{ kind: "other", text: clip(asText(item.text), TEXT_LIMIT) }];
      case "error":
        // Codex reports warnings as error items (e.g. unknown model metadata); a failed turn says turn.failed.
        return [{ kind: "error", text: clip(asText(item.message), TEXT_LIMIT) }];
      default:
        return [{ kind: "other", text: String(item.type ?? "item") }];
    }
  }

  function onLine(line: Json): AgentEvent[] {
    switch (line.type) {
      case "thread.started":
        if (typeof line.thread_id === "string") sessionId = line.thread_id;
        return [{ kind: "init", ...(sessionId ? { sessionId } : {}) }];
      case "item.started":
      case "item.updated":
      case "item.completed":
        return onItem(line.type, asRecord(line.item) ?? {});
      case "turn.completed": {
        const usage = asRecord(line.usage);
        if (usage) tokens = addUsage(tokens, usage);
        completed = true;
        return [{ kind: "result", text: messages.join("\n"), ...(sessionId ? { sessionId } : {}) }];
      }
      case "turn.failed":
        failed = asText(asRecord(line.error)?.message) || "turn failed";
        return [{ kind: "error", text: clip(failed, TEXT_LIMIT) }];
      case "error":
        lastError = asText(line.message);
        return [{ kind: "error", text: clip(lastError, TEXT_LIMIT) }];
      case "turn.started":
        messages = [];
        return [];
      default:
        return [{ kind: "other", text: String(line.type ?? "unknown") }];
    }
  }

  function failureWithoutTurnEnd(
    stderrTail: string,
    exit: { code: number | null; signal: string | null },
  ): AgentFailure | null {
    // Ended while retrying: the request that kept failing is the cause.
    const error = lastError as string | null;
    if (error !== null) return classifyCodexError(RETRY_NOTICE.exec(error)?.[1] ?? error, now());
    const text = [...stray.lines, stderrTail].join("\n").trim();
    if (text && (detectLimit(text, now()) || isAuthFailure(text))) return classifyCodexError(text, now());
    return firstLineFailure(text, exit, TEXT_LIMIT, /^WARNING: proceeding/);
  }

  return {
    line: (text: string): AgentEvent[] => stray.read(text, onLine),

    finish(stderrTail, exit): AgentOutcome {
      const failedMessage = failed as string | null;
      const outcome: AgentOutcome = {
        finalMessage: completed && failedMessage === null && messages.length > 0 ? messages.join("\n") : null,
        sawResult: completed || failedMessage !== null,
      };
      if (sessionId) outcome.sessionId = sessionId;
      if (tokens) outcome.tokens = tokens;
      const failure =
        failedMessage !== null
          ? classifyCodexError(failedMessage, now())
          : completed
            ? null
            : failureWithoutTurnEnd(stderrTail, exit);
      applyFailure(outcome, failure);
      return outcome;
    },
  };
}
