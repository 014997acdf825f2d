// The `type: review` completion criterion as ralph.yaml and state.md write it: which agent reviews, with
// which model, extra instructions, its command (for the `command` agent) and its time limit.
import { AGENT_NAMES, type AgentName } from "../agents/types.js";
import { formatDuration, parseCommandWords, parsePositiveDuration } from "../util/parse-value.js";
import { clip } from "../util/clip.js";

/** How one review runs. */
export interface ReviewSpec {
  agent: AgentName;
  model: string | null;
  /** Extra instructions for the reviewer, after ralph's own. */
  prompt: string | null;
  /** The argv of the `command` agent (required for it, refused for the others). */
  command: string[] | null;
  timeoutMs: number;
}

/** A reviewer's time limit when none is given: the same as a check command's. */
export const DEFAULT_REVIEW_TIMEOUT_MS = 10 * 60 * 1000;

const KEYS = ["type", "check", "agent", "model", "prompt", "command", "timeout"];

/** Reads a review criterion's keys; `where` names it in the message of a bad one. */
export function parseReviewFields(
  entry: Record<string, unknown>,
  where: string,
): { ok: true; review: ReviewSpec; label: string } | { ok: false; message: string } {
  const fail = (message: string) => ({ ok: false as const, message: `${where} (review) ${message}` });
  const unknownKey = Object.keys(entry).find((key) => !KEYS.includes(key));
  if (unknownKey !== undefined)
    return fail(`has an unknown key "${unknownKey}" (expected ${KEYS.slice(2).join(", ")})`);
  const { agent, model = null, prompt = null, command = null, timeout, check } = entry;
  if (typeof agent !== "string" || !(AGENT_NAMES as readonly string[]).includes(agent.trim())) {
    return fail(`needs "agent": one of ${AGENT_NAMES.join(", ")}, got ${JSON.stringify(agent) ?? "nothing"}`);
  }
  const name = agent.trim() as AgentName;
  if (model !== null && (typeof model !== "string" || model.trim() === ""))
    return fail(`"model": expected a model name, got ${JSON.stringify(model)}`);
  if (prompt !== null && typeof prompt !== "string")
    return fail(`"prompt": expected a text, got ${JSON.stringify(prompt)}`);
  let argv: string[] | null = null;
  if (command !== null) {
    if (name !== "command") return fail(`"command" is only for agent: command (the ${name} agent is started by ralph)`);
    const words = parseCommandWords(command);
    if (!words.ok) return fail(`"command": expected ${words.expected}, got ${JSON.stringify(command)}`);
    argv = words.value;
  } else if (name === "command") return fail(`with agent: command needs "command": the reviewer's command line`);
  let timeoutMs = DEFAULT_REVIEW_TIMEOUT_MS;
  if (timeout !== undefined && timeout !== null) {
    const parsed = parsePositiveDuration(timeout);
    if (!parsed.ok) return fail(`"timeout": expected ${parsed.expected}, got ${JSON.stringify(timeout)}`);
    timeoutMs = parsed.value;
  }
  if (check !== undefined && check !== null && typeof check !== "string")
    return fail(`"check": expected a label, got ${JSON.stringify(check)}`);
  const review: ReviewSpec = { agent: name, model: model?.trim() ?? null, prompt, command: argv, timeoutMs };
  const label = typeof check === "string" && check.trim() !== "" ? check : reviewLabel(review);
  return { ok: true, review, label };
}

/** The reviewer in a few words: `claude (model opus)`, `command node review.mjs`. */
export function reviewLabel(review: ReviewSpec): string {
  const line = review.command?.join(" ") ?? "";
  const who = review.command ? `command ${clip(line, 40)}` : review.agent;
  return review.model ? `${who} (model ${review.model})` : who;
}

/** The keys a review criterion is written back with (state.md), as parseReviewFields reads them. */
export function reviewFields(review: ReviewSpec, label: string): Record<string, unknown> {
  return {
    type: "review",
    check: label,
    agent: review.agent,
    ...(review.model ? { model: review.model } : {}),
    ...(review.prompt !== null ? { prompt: review.prompt } : {}),
    ...(review.command ? { command: review.command } : {}),
    timeout: formatDuration(review.timeoutMs),
  };
}
