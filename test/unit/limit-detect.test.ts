// Limit messages, their reset times, and auth failures that must not pass for limits.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { detectLimit, isAuthFailure, parseResetTime } from "../../src/agents/limit-detect.js";

const HOUR = 3_600_000;

/** A local wall-clock time (the runner's zone), for messages that name no zone. */
function local(year: number, month: number, day: number, hour: number, minute = 0): Date {
  return new Date(year, month - 1, day, hour, minute);
}

describe("detectLimit", () => {
  const limits = [
    "Claude AI usage limit reached|1735689600",
    "5-hour limit reached ∙ resets 7pm",
    "You've hit your limit · resets 7:30pm (Europe/London)",
    "You've hit your session limit · resets 3pm",
    "Weekly limit reached",
    "API Error: Request rejected (429) · Rate limited",
    "rate_limit_error: Number of requests has exceeded your per-minute rate limit",
    "HTTP 429",
    "429 Too Many Requests",
    "Please retry after 30 seconds",
    "Quota exceeded for quota metric 'Generate Content API requests per minute'",
    "RESOURCE_EXHAUSTED",
  ];
  for (const text of limits) {
    test(`is a limit: ${text}`, () => {
      const limit = detectLimit(text, new Date("2026-11-30T12:00:00Z"));
      assert.ok(limit, text);
      assert.equal(limit.message, text);
    });
  }

  const notLimits = [
    "Invalid API key · Fix external API key",
    '{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}',
    "Failed to authenticate. API Error: 403 Your API key does not have permission to use the specified resource.",
    "401 Unauthorized (rate limited?)",
    "Credit balance is too low",
    "Context limit reached · /compact or /clear to continue",
    "Subagent nesting limit reached (depth 3 of 3).",
    "All 4290 tests passed",
    "",
  ];
  for (const text of notLimits) {
    test(`is not a limit: ${text || "(empty)"}`, () => {
      assert.equal(detectLimit(text, new Date("2026-11-30T12:00:00Z")), null);
    });
  }

  test("the message is the line that names the limit, and the reset comes from anywhere in the text", () => {
    const limit = detectLimit(
      "Working...\nClaude usage limit reached. Your limit will reset at 2026-11-30T15:00:00Z.\nBye",
      new Date("2026-11-30T12:00:00Z"),
    );
    assert.equal(limit?.message, "Claude usage limit reached. Your limit will reset at 2026-11-30T15:00:00Z.");
    assert.equal(limit?.resetAt?.toISOString(), "2026-11-30T15:00:00.000Z");
  });

  test("auth failures are recognised on their own", () => {
    assert.equal(isAuthFailure("Invalid API key · Fix external API key"), true);
    assert.equal(isAuthFailure("OAuth token has expired"), true);
    assert.equal(isAuthFailure("usage limit reached"), false);
  });
});

describe("parseResetTime", () => {
  test("an epoch after a pipe, in seconds or milliseconds", () => {
    const now = new Date("2026-11-30T12:00:00Z");
    assert.equal(
      parseResetTime("Claude AI usage limit reached|1735689600", now)?.toISOString(),
      "2025-01-01T00:00:00.000Z",
    );
    assert.equal(parseResetTime("limit|1735689600000", now)?.toISOString(), "2025-01-01T00:00:00.000Z");
  });

  test("a time of day in a named zone: later today, or tomorrow once past", () => {
    // 1 July: London is on UTC+1.
    assert.equal(
      parseResetTime("resets 7:30pm (Europe/London)", new Date("2026-07-01T12:00:00Z"))?.toISOString(),
      "2026-07-01T18:30:00.000Z",
    );
    assert.equal(
      parseResetTime("resets 7:30pm (Europe/London)", new Date("2026-07-01T19:00:00Z"))?.toISOString(),
      "2026-07-02T18:30:00.000Z",
    );
    // 15 January: New York is on UTC-5.
    assert.equal(
      parseResetTime("resets 3pm (America/New_York)", new Date("2026-01-15T12:00:00Z"))?.toISOString(),
      "2026-01-15T20:00:00.000Z",
    );
    assert.equal(
      parseResetTime("resets 12am (UTC)", new Date("2026-01-15T12:00:00Z"))?.toISOString(),
      "2026-01-16T00:00:00.000Z",
    );
    assert.equal(
      parseResetTime("resets 12pm (UTC)", new Date("2026-01-15T11:00:00Z"))?.toISOString(),
      "2026-01-15T12:00:00.000Z",
    );
  });

  test("a time of day with no zone is the runner's local time", () => {
    assert.equal(
      parseResetTime("5-hour limit reached ∙ resets 7pm", local(2026, 3, 10, 15))?.getTime(),
      local(2026, 3, 10, 19).getTime(),
    );
    assert.equal(
      parseResetTime("5-hour limit reached ∙ resets 7pm", local(2026, 3, 10, 20))?.getTime(),
      local(2026, 3, 11, 19).getTime(),
    );
    assert.equal(parseResetTime("resets at 19:00", local(2026, 3, 10, 8))?.getTime(), local(2026, 3, 10, 19).getTime());
    // An unknown zone name falls back to local time rather than failing.
    assert.equal(
      parseResetTime("resets 7pm (Mars/Olympus)", local(2026, 3, 10, 15))?.getTime(),
      local(2026, 3, 10, 19).getTime(),
    );
  });

  test("a date and time, as Claude Code prints resets more than a day away", () => {
    assert.equal(
      parseResetTime("resets Dec 5, 7pm (UTC)", new Date("2026-11-30T12:00:00Z"))?.toISOString(),
      "2026-12-05T19:00:00.000Z",
    );
    assert.equal(
      parseResetTime("resets Jan 2, 9am (UTC)", new Date("2026-12-30T12:00:00Z"))?.toISOString(),
      "2027-01-02T09:00:00.000Z",
    );
    assert.equal(
      parseResetTime("resets Mar 3, 2027, 10:15am (UTC)", new Date("2026-12-30T12:00:00Z"))?.toISOString(),
      "2027-03-03T10:15:00.000Z",
    );
  });

  test("relative delays", () => {
    const now = new Date("2026-11-30T12:00:00Z");
    const after = (text: string) => (parseResetTime(text, now)?.getTime() ?? Number.NaN) - now.getTime();
    assert.equal(after("Please retry after 30 seconds"), 30_000);
    assert.equal(after("try again in 2h 30m"), 2.5 * HOUR);
    assert.equal(after("resets in 45 minutes"), 45 * 60_000);
    assert.equal(after("retry-after: 12"), 12_000);
    assert.equal(after("retry-after-ms: 1500"), 1_500);
  });

  test("no usable time", () => {
    const now = new Date("2026-11-30T12:00:00Z");
    for (const text of [
      "usage limit reached",
      "resets soon",
      "resets 25pm",
      "resets 7 things",
      "resets 13pm (UTC)",
      "retry after a while",
    ]) {
      assert.equal(parseResetTime(text, now), null, text);
    }
  });
});
