// Reads Claude Code's `--output-format stream-json` lines into events and one iteration's outcome.
import { detectLimit, isAuthFailure, isConfigFailure, parseResetTime } from "./limit-detect.js";
import { type AgentFailure, type Json, StrayLines, applyFailure, asNumber, asRecord } from "./json-fields.js";
import { clip } from "../util/clip.js";
import { TextTail } from "../util/text-tail.js";
import type { AgentErrorKind, AgentEvent, AgentOutcome, LimitInfo, OutputParser, TokenUsage } from "./types.js";

const TOOL_RESULT_LIMIT = 300;
const SUMMARY_LIMIT = 120;
/** Keeps at most this much of the assistant's latest text (the final message when no result line has it). */
const FINAL_TEXT_LIMIT = 256 * 1024;
const SUMMARY_FIELDS = [
  "command",
  "file_path",
  "notebook_path",
  "path",
  "pattern",
  "url",
  "query",
  "description",
  "prompt",
  "skill",
];
// Claude Code's own names for the failure behind a synthetic assistant message (its `error` field).
const ERROR_KINDS: Record<string, AgentErrorKind> = {
  rate_limit: "rate_limit",
  authentication_failed: "auth",
  billing_error: "auth",
  oauth_org_not_allowed: "auth",
};
const ROOT_REFUSAL = /cannot be used with root\/sudo privileges/i;

/** A one-line description of a tool call, e.g. the Bash command or the file written. */
export function summarizeToolInput(tool: string, input: unknown): string {
  const fields = asRecord(input);
  if (!fields) return "";
  if (tool === "TodoWrite" && Array.isArray(fields.todos)) return `${fields.todos.length} todos`;
  const field = SUMMARY_FIELDS.find((name) => typeof fields[name] === "string");
  const text = field ? (fields[field] as string) : JSON.stringify(fields);
  return clip(text.replace(/\s+/g, " ").trim(), SUMMARY_LIMIT);
}

function flattenContent(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((block) => (typeof asRecord(block)?.text === "string" ? (asRecord(block)?.text as string) : ""))
    .join("\n");
}

function tokensFrom(result: Json): TokenUsage | undefined {
  const usage = asRecord(result.usage);
  const tokens: TokenUsage = {
    input: asNumber(usage?.input_tokens) ?? 0,
    output: asNumber(usage?.output_tokens) ?? 0,
    cacheRead: asNumber(usage?.cache_read_input_tokens) ?? 0,
    cacheWrite: asNumber(usage?.cache_creation_input_tokens) ?? 0,
  };
  const models = Object.values(asRecord(result.modelUsage) ?? {}).map(asRecord);
  // 2.1.197 reports zero `usage` in an error_max_budget_usd result while `modelUsage` has the real counts.
  if (tokens.input + tokens.output + (tokens.cacheRead ?? 0) + (tokens.cacheWrite ?? 0) === 0 && models.length > 0) {
    for (const model of models) {
      tokens.input += asNumber(model?.inputTokens) ?? 0;
      tokens.output += asNumber(model?.outputTokens) ?? 0;
      tokens.cacheRead = (tokens.cacheRead ?? 0) + (asNumber(model?.cacheReadInputTokens) ?? 0);
      tokens.cacheWrite = (tokens.cacheWrite ?? 0) + (asNumber(model?.cacheCreationInputTokens) ?? 0);
    }
  }
  return usage || models.length > 0 ? tokens : undefined;
}

/** A parser for one Claude Code run; `now` dates relative reset times (tests pass a fixed clock). */
export function createClaudeParser(input: { prompt: string; now?: () => Date }): OutputParser {
  const now = input.now ?? (() => new Date());
  const toolNames = new Map<string, string>();
  const stray = new StrayLines(TOOL_RESULT_LIMIT);
  let sessionId: string | undefined;
  let model: string | undefined;
  let result: Json | null = null;
  // Held in a ring (no string kept per line) of twice the limit, cut back to the limit as before.
  const finalText = new TextTail(2 * FINAL_TEXT_LIMIT + 1);
  let lastSynthetic = false;
  let assistantError: string | undefined;
  let lastRetry: { status: number | undefined; error: string } | null = null;
  let rejected: LimitInfo | null = null;
  let fatal: AgentFailure | null = null;
  const usageById = new Map<string, TokenUsage>();

  function onSystem(line: Json): AgentEvent[] {
    if (line.subtype === "init") {
      if (typeof line.session_id === "string") sessionId = line.session_id;
      if (typeof line.model === "string" && line.model !== "") model = line.model;
      return [
        { kind: "init", ...(sessionId ? { sessionId } : {}), text: typeof line.model === "string" ? line.model : "" },
      ];
    }
    if (line.subtype === "api_retry") {
      lastRetry = { status: asNumber(line.error_status), error: String(line.error ?? "") };
      const seconds = ((asNumber(line.retry_delay_ms) ?? 0) / 1000).toFixed(1);
      const text = `API retry ${String(line.attempt)}/${String(line.max_retries)} in ${seconds}s after ${String(line.error_status)} ${lastRetry.error}`;
      // Claude Code retries a rejected key for minutes; no retry can fix it, so the iteration ends now.
      const status = lastRetry.status;
      if (status === 401 || status === 403) {
        fatal = {
          kind: "auth",
          message: `the API rejected Claude Code's credentials (${status} ${lastRetry.error}); check ANTHROPIC_API_KEY or run claude /login`,
        };
      } else if (status === 404) {
        fatal = { kind: "config", message: `the API answered 404 (${lastRetry.error}); is the model name right?` };
      }
      return [{ kind: "retry", text, ...(fatal ? { fatal: fatal.message } : {}) }];
    }
    return [{ kind: "other", text: `system ${String(line.subtype ?? "")}`.trim() }];
  }

  function onAssistant(line: Json): AgentEvent[] {
    const message = asRecord(line.message);
    const topLevel = line.parent_tool_use_id === undefined || line.parent_tool_use_id === null;
    const synthetic = message?.model === "<synthetic>" || typeof line.error === "string";
    if (topLevel) {
      lastSynthetic = synthetic;
      if (typeof line.error === "string") assistantError = line.error;
    }
    const events: AgentEvent[] = [];
    const tokens = liveTokens(message);
    for (const block of Array.isArray(message?.content) ? message.content.map(asRecord) : []) {
      if (block?.type === "text" && typeof block.text === "string" && block.text !== "") {
        events.push({ kind: synthetic ? "error" : "text", text: block.text });
        if (topLevel) {
          if (finalText.length > 0) finalText.append("\n");
          finalText.append(block.text);
          // Bounded, and cut only now and then so each line stays cheap: the end of the text is what matters.
          if (finalText.length > 2 * FINAL_TEXT_LIMIT) finalText.keep(FINAL_TEXT_LIMIT);
        }
      } else if (block?.type === "tool_use" && typeof block.name === "string") {
        if (typeof block.id === "string") toolNames.set(block.id, block.name);
        events.push({ kind: "tool_use", tool: block.name, text: summarizeToolInput(block.name, block.input) });
      }
    }
    return tokens ? events.map((event) => ({ ...event, tokens })) : events;
  }

  // Each API call's usage repeats on every line of its message: keep the latest per message id, sum over ids.
  function liveTokens(message: Json | null): TokenUsage | null {
    const usage = asRecord(message?.usage);
    if (!usage || typeof message?.id !== "string") return null;
    usageById.set(message.id, {
      input:
        (asNumber(usage.input_tokens) ?? 0) +
        (asNumber(usage.cache_read_input_tokens) ?? 0) +
        (asNumber(usage.cache_creation_input_tokens) ?? 0),
      output: asNumber(usage.output_tokens) ?? 0,
    });
    const total = { input: 0, output: 0 };
    for (const each of usageById.values()) {
      total.input += each.input;
      total.output += each.output;
    }
    return total;
  }

  function onUser(line: Json): AgentEvent[] {
    const content = asRecord(line.message)?.content;
    if (line.parent_tool_use_id === undefined || line.parent_tool_use_id === null) finalText.clear();
    if (!Array.isArray(content)) return [{ kind: "other", text: clip(flattenContent(content), TOOL_RESULT_LIMIT) }];
    return content.map(asRecord).flatMap((block): AgentEvent[] => {
      if (block?.type === "tool_result") {
        const tool = typeof block.tool_use_id === "string" ? toolNames.get(block.tool_use_id) : undefined;
        const text = clip(
          `${block.is_error === true ? "error: " : ""}${flattenContent(block.content)}`,
          TOOL_RESULT_LIMIT,
        );
        return [{ kind: "tool_result", text, ...(tool ? { tool } : {}) }];
      }
      return typeof block?.text === "string" ? [{ kind: "other", text: clip(block.text, TOOL_RESULT_LIMIT) }] : [];
    });
  }

  function onRateLimit(line: Json): AgentEvent[] {
    const info = asRecord(line.rate_limit_info);
    if (info?.status !== "rejected")
      return [{ kind: "other", text: `rate limit ${String(info?.status ?? "")}`.trim() }];
    const resetsAt = asNumber(info.resetsAt);
    const message = `usage limit reached${typeof info.rateLimitType === "string" ? ` (${info.rateLimitType})` : ""}`;
    rejected = { message, resetAt: resetsAt === undefined ? null : new Date(resetsAt * 1000) };
    return [{ kind: "error", text: message }];
  }

  function failureFromResult(line: Json): AgentFailure | null {
    const text = typeof line.result === "string" ? line.result : "";
    const errors = Array.isArray(line.errors) ? line.errors.filter((item) => typeof item === "string").join("; ") : "";
    const status = asNumber(line.api_error_status);
    if (status !== undefined || (line.is_error === true && assistantError)) {
      const named = assistantError ? ERROR_KINDS[assistantError] : undefined;
      const base =
        status === 429
          ? "rate_limit"
          : status === 401 || status === 403
            ? "auth"
            : (named ?? (isAuthFailure(text) ? "auth" : "api"));
      const kind = base === "api" && (status === 404 || isConfigFailure(text || errors)) ? "config" : base;
      const message = text || errors || `API error ${String(status ?? assistantError)}`;
      if (kind !== "rate_limit") return { kind, message };
      return { kind, message, limit: { message, resetAt: parseResetTime(message, now()) } };
    }
    if (line.subtype === "error_max_turns")
      return { kind: "max_turns", message: errors || `stopped after ${String(line.num_turns)} turns` };
    if (line.subtype === "error_during_execution") {
      // Its `errors` are internal diagnostics; the terminal reason (aborted_tools, aborted_streaming) says more.
      return {
        kind: "other",
        message: `interrupted${typeof line.terminal_reason === "string" ? ` (${line.terminal_reason})` : ""}`,
      };
    }
    if (typeof line.subtype === "string" && line.subtype.startsWith("error"))
      return { kind: "other", message: errors || line.subtype };
    if (line.is_error === true) return failureFromText(text || errors, "api");
    return null;
  }

  function failureFromText(text: string, fallback: AgentErrorKind): AgentFailure {
    const limit = detectLimit(text, now());
    if (limit) return { kind: "rate_limit", message: limit.message, limit };
    return { kind: isAuthFailure(text) ? "auth" : fallback, message: clip(text.trim(), TOOL_RESULT_LIMIT) };
  }

  function failureWithoutResult(
    stderrTail: string,
    exit: { code: number | null; signal: string | null },
  ): AgentFailure | null {
    const text = [...stray.lines, stderrTail].join("\n").trim();
    const rootRefusal = text.split("\n").find((line) => ROOT_REFUSAL.test(line));
    if (rootRefusal) {
      // A refusal of its arguments: no retry fixes it, so the run ends at once with the way out.
      return {
        kind: "config",
        message: `${rootRefusal.trim()} (as root, Claude Code skips permission prompts only with IS_SANDBOX=1: run it in ralph's sandbox, or as a user other than root)`,
      };
    }
    if (text && (detectLimit(text, now()) || isAuthFailure(text))) return failureFromText(text, "other");
    const config = text.split("\n").find(isConfigFailure);
    if (config) return { kind: "config", message: clip(config.trim(), TOOL_RESULT_LIMIT) };
    // Ended while Claude Code was still retrying a failed request: that request's failure is the cause.
    const retry = lastRetry;
    if (retry) {
      const message = `Claude Code was retrying after ${String(retry.status)} ${retry.error}`;
      if (retry.status === 429) return { kind: "rate_limit", message, limit: { message, resetAt: null } };
      return { kind: retry.status === 401 || retry.status === 403 ? "auth" : "api", message };
    }
    if (text && exit.code !== 0 && exit.signal === null)
      return { kind: "other", message: clip(text.split("\n")[0] ?? text, TOOL_RESULT_LIMIT) };
    return null;
  }

  function finalMessage(line: Json | null): string | null {
    if (!line) return null;
    if (line.is_error !== true && typeof line.result === "string") return line.result;
    // An error result (e.g. error_max_budget_usd) after a finished answer carries no `result`: the answer is still final.
    if (line.stop_reason === "end_turn" && !lastSynthetic && finalText.length > 0) return finalText.text();
    return null;
  }

  function onLine(parsed: Json): AgentEvent[] {
    switch (parsed.type) {
      case "system":
        return onSystem(parsed);
      case "assistant":
        return onAssistant(parsed);
      case "user":
        return onUser(parsed);
      case "rate_limit_event":
        return onRateLimit(parsed);
      case "result":
        result = parsed;
        if (typeof parsed.session_id === "string") sessionId = parsed.session_id;
        return [
          {
            kind: "result",
            text: typeof parsed.result === "string" ? parsed.result : String(parsed.subtype ?? ""),
            ...(sessionId ? { sessionId } : {}),
          },
        ];
      default:
        return [{ kind: "other", text: String(parsed.type ?? "unknown") }];
    }
  }

  return {
    line: (text: string): AgentEvent[] => stray.read(text, onLine),

    finish(stderrTail, exit): AgentOutcome {
      const line = result;
      const outcome: AgentOutcome = { finalMessage: finalMessage(line), sawResult: line !== null };
      if (sessionId) outcome.sessionId = sessionId;
      if (line) {
        const cost = asNumber(line.total_cost_usd);
        if (cost !== undefined) outcome.costUsd = cost;
        const tokens = tokensFrom(line);
        if (tokens) outcome.tokens = tokens;
        // The model that did most of the work (Claude Code may call a small one on the side).
        const used = Object.entries(asRecord(line.modelUsage) ?? {}).sort(
          ([, a], [, b]) => (asNumber(asRecord(b)?.outputTokens) ?? 0) - (asNumber(asRecord(a)?.outputTokens) ?? 0),
        )[0]?.[0];
        if (used ?? model) outcome.model = used ?? model;
        const turns = asNumber(line.num_turns);
        if (turns !== undefined) outcome.turns = turns;
      }
      // An error no retry fixes, seen while Claude Code was retrying, is the cause whatever came after it.
      let failure = fatal ?? (line ? failureFromResult(line) : failureWithoutResult(stderrTail, exit));
      const limitEvent = rejected;
      // A rejected rate_limit_event carries the structured reset time; it counts unless the run went on to succeed.
      if (limitEvent && (!line || line.is_error === true)) {
        const message = failure?.kind === "rate_limit" ? failure.message : limitEvent.message;
        failure = { kind: "rate_limit", message, limit: { message, resetAt: limitEvent.resetAt } };
      }
      applyFailure(outcome, failure);
      return outcome;
    },
  };
}
