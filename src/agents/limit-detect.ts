// Recognises provider usage/rate-limit messages in agent output and reads their reset time.
import type { LimitInfo } from "./types.js";

// Authentication and account failures never clear by waiting, so they must never be taken for a
// limit, even when their text also says "limit" somewhere.
const AUTH_PATTERNS: RegExp[] = [
  /invalid[ _-]?(x-)?api[ _-]?key/i,
  /authentication[ _-](error|failed)/i,
  /failed to authenticate/i,
  /\b(401|403)\b/,
  /\bunauthori[sz]ed\b/i,
  /\bforbidden\b/i,
  /permission_error/i,
  /oauth token (has )?(expired|revoked)/i,
  /please run \/login|not logged in/i,
  /credit balance (is )?too low/i,
];

// An account that cannot pay: no wait clears it, whatever word for a limit the message also uses.
const BILLING_PATTERNS: RegExp[] = [
  /credit balance (is )?too low/i,
  /\binsufficient[_ ]quota\b/i,
  /\binsufficient[_ ](credits?|funds|balance)\b/i,
  /\bbilling[_ ]error\b/i,
  /\bpayment required\b/i,
  /\bout of credits\b/i,
  /\bquota exceeded\. check your plan and billing details\b/i,
];

/** Whether a message reports a billing failure: no credit or quota left to pay for calls (never a limit to wait out). */
export function isBillingFailure(text: string): boolean {
  return BILLING_PATTERNS.some((pattern) => pattern.test(text));
}

// "Context limit reached" and "nesting limit reached" are not provider limits: the kinds are listed.
const LIMIT_PATTERNS: RegExp[] = [
  /usage limit/i,
  /\b(rate|session|weekly|daily|hourly|monthly|5-hour|five[ -]hour|opus|sonnet|token|request)s? limit (reached|exceeded|hit)\b/i,
  /\bhit your\b.{0,40}\blimit\b/i,
  /\brate[ _-]?limit(ed|s)?\b/i,
  /\b429\b/,
  /too many requests/i,
  /\bretry[ -]after\b/i,
  /\bquota exceeded\b|\bresource[ _]exhausted\b/i,
];

const MESSAGE_LIMIT = 300;
const DAY_MS = 24 * 60 * 60 * 1000;
const MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"];

// Mistakes in how the agent was called: waiting or retrying never fixes them. Besides the general words, the
// refusals of the pinned CLIs, as they print them.
const CONFIG_PATTERNS: RegExp[] = [
  /\b(unknown|unrecognized|invalid|unexpected) (option|argument|flag)\b/i,
  /\b(unknown|invalid|unsupported) model\b/i,
  /\bmodel\b[^\n]{0,60}\b(not found|does not exist|not_found|is not supported|not available)\b/i,
  // Claude Code: `--dangerously-skip-permissions cannot be used with root/sudo privileges for security reasons`,
  // `error: option '--permission-mode <mode>' argument 'x' is invalid.`, `error: option '--model <model>' argument
  // missing`, `Error processing --setting-sources: …`, `--output-format=stream-json requires --verbose`.
  /cannot be used with root\/sudo privileges/i,
  /\boption '[^']+' argument ('[^']*' is invalid|missing)\b/,
  /\bError processing --[\w-]+:/,
  /(^|\s)--[\w=-]+ requires --[\w-]+/,
  // Codex (clap): `error: invalid value 'x' for '--sandbox <SANDBOX_MODE>'`, `error: a value is required for
  // '--model <MODEL>'`, `error: the argument '--a' cannot be used with '--b'`, `Error parsing -c overrides: …`.
  /\binvalid value '[^']*' for '-/,
  /\ba value is required for '-/,
  /\bthe argument '-[^']+' cannot be used with\b/,
  /\bError parsing -c overrides\b/,
  // Gemini CLI (yargs): `Argument: approval-mode, Given: "x", Choices: …` (under `Invalid values:`),
  // `Cannot use both --yolo (-y) and --approval-mode together`, `Not enough arguments following: model`.
  /^\s*Argument: [\w-]+, Given: /,
  /\bCannot use both --[\w-]+/,
  /\bNot enough arguments following: /,
];

/** Whether a message says the agent was called wrongly (a bad flag, an unknown model). */
export function isConfigFailure(text: string): boolean {
  return CONFIG_PATTERNS.some((pattern) => pattern.test(text));
}

/** Whether a message reports an authentication or account failure (never a limit). */
export function isAuthFailure(text: string): boolean {
  return AUTH_PATTERNS.some((pattern) => pattern.test(text));
}

/** A usage or rate limit named in `text`, with its reset time when the text gives one; null otherwise. */
export function detectLimit(text: string, now: Date): LimitInfo | null {
  if (isAuthFailure(text)) return null;
  const hit = text.split(/\r?\n/).find((line) => LIMIT_PATTERNS.some((pattern) => pattern.test(line)));
  if (hit === undefined) return null;
  return { message: hit.trim().slice(0, MESSAGE_LIMIT), resetAt: parseResetTime(text, now) };
}

/** The reset time a limit message names: an epoch after `|`, an ISO time, "in 5 minutes", or "resets 7pm (Zone)". */
export function parseResetTime(text: string, now: Date): Date | null {
  return epochAfterPipe(text) ?? isoReset(text) ?? relativeReset(text, now) ?? clockReset(text, now);
}

// "Claude AI usage limit reached|1735689600": seconds (or milliseconds) since the epoch.
function epochAfterPipe(text: string): Date | null {
  const match = /\|\s*(\d{10}|\d{13})(?!\d)/.exec(text);
  if (!match?.[1]) return null;
  const value = Number(match[1]);
  return new Date(match[1].length === 10 ? value * 1000 : value);
}

function isoReset(text: string): Date | null {
  const match =
    /\breset(?:s|_at|s_at)?\b[^0-9\n]{0,20}(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)/i.exec(
      text,
    );
  if (!match?.[1]) return null;
  const ms = Date.parse(match[1]);
  return Number.isNaN(ms) ? null : new Date(ms);
}

const UNIT_MS: Array<[RegExp, number]> = [
  [/^(ms|milliseconds?)$/, 1],
  [/^(s|secs?|seconds?)$/, 1000],
  [/^(m|mins?|minutes?)$/, 60_000],
  [/^(h|hrs?|hours?)$/, 3_600_000],
  [/^(d|days?)$/, DAY_MS],
];

function relativeReset(text: string, now: Date): Date | null {
  const duration =
    /(?:\bresets?|\btry again|\bretry|\bavailable again)\s+(?:in|after)\s*:?\s*((?:\d+(?:\.\d+)?\s*[a-z]*[\s,]*(?:and\s+)?)+)/i.exec(
      text,
    ) ?? /\bretry-after(?:-ms)?\s*[:=]\s*(\d+(?:\.\d+)?)/i.exec(text);
  if (!duration?.[1]) return null;
  const bareUnit = /retry-after-ms/i.test(duration[0]) ? 1 : 1000;
  let total = 0;
  for (const part of duration[1].matchAll(/(\d+(?:\.\d+)?)\s*([a-z]*)/gi)) {
    const unit = (part[2] ?? "").toLowerCase();
    const scale = unit === "" ? bareUnit : UNIT_MS.find(([pattern]) => pattern.test(unit))?.[1];
    if (scale === undefined) break;
    total += Number(part[1]) * scale;
  }
  return total > 0 ? new Date(now.getTime() + total) : null;
}

// "resets 7pm", "resets 7:30pm (Europe/London)", "resets Dec 5, 7pm (UTC)", "resets at 19:00".
function clockReset(text: string, now: Date): Date | null {
  const match =
    /\bresets?\s+(?:at\s+)?(?:([a-z]{3})[a-z]*\.?\s+(\d{1,2})(?:,\s*(\d{4}))?,?\s+(?:at\s+)?)?(\d{1,2})(?::(\d{2}))?\s*(am|pm)?(?:\s*\(([^)]+)\))?/i.exec(
      text,
    );
  if (!match) return null;
  const [, monthName, dayText, yearText, hourText, minuteText, meridiem, zoneText] = match;
  if (!meridiem && minuteText === undefined) return null;
  let hour = Number(hourText);
  const minute = Number(minuteText ?? 0);
  if (meridiem) {
    if (hour < 1 || hour > 12) return null;
    hour = (hour % 12) + (meridiem.toLowerCase() === "pm" ? 12 : 0);
  }
  if (hour > 23 || minute > 59) return null;
  const zone = validZone(zoneText?.trim()) ?? new Intl.DateTimeFormat().resolvedOptions().timeZone;
  const today = wallClock(now.getTime(), zone);
  const month = monthName ? MONTHS.indexOf(monthName.toLowerCase()) : -1;
  if (monthName && month < 0) return null;
  if (month >= 0) {
    const year = yearText ? Number(yearText) : today.year;
    let at = zonedTime(year, month, Number(dayText), hour, minute, zone);
    // "Jan 2" read on Dec 30 means next year's.
    if (!yearText && at < now.getTime() - 180 * DAY_MS)
      at = zonedTime(year + 1, month, Number(dayText), hour, minute, zone);
    return new Date(at);
  }
  let at = zonedTime(today.year, today.month, today.day, hour, minute, zone);
  // A time of day already past today means that time tomorrow.
  if (at <= now.getTime()) at = zonedTime(today.year, today.month, today.day + 1, hour, minute, zone);
  return new Date(at);
}

function validZone(zone: string | undefined): string | null {
  if (!zone) return null;
  try {
    return new Intl.DateTimeFormat("en-US", { timeZone: zone }).resolvedOptions().timeZone;
  } catch {
    return null;
  }
}

interface WallClock {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
}

function wallClock(ms: number, zone: string): WallClock {
  const format = new Intl.DateTimeFormat("en-US", {
    timeZone: zone,
    hourCycle: "h23",
    year: "numeric",
    month: "numeric",
    day: "numeric",
    hour: "numeric",
    minute: "numeric",
    second: "numeric",
  });
  const parts = Object.fromEntries(format.formatToParts(new Date(ms)).map((part) => [part.type, Number(part.value)]));
  return {
    year: parts.year ?? 1970,
    month: (parts.month ?? 1) - 1,
    day: parts.day ?? 1,
    hour: parts.hour ?? 0,
    minute: parts.minute ?? 0,
    second: parts.second ?? 0,
  };
}

function zoneOffset(ms: number, zone: string): number {
  const wall = wallClock(ms, zone);
  const asUtc = Date.UTC(wall.year, wall.month, wall.day, wall.hour, wall.minute, wall.second);
  return asUtc - Math.floor(ms / 1000) * 1000;
}

// The instant at which the clocks of `zone` show the given wall time (Date.UTC normalises day overflow).
function zonedTime(year: number, month: number, day: number, hour: number, minute: number, zone: string): number {
  const guess = Date.UTC(year, month, day, hour, minute);
  const first = guess - zoneOffset(guess, zone);
  const second = guess - zoneOffset(first, zone);
  return second;
}
