// Tokens of an in-session loop from Claude Code's transcript: each API call once, only since the loop began.
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { readTranscriptUsage } from "../../src/hook/transcript-usage.js";

const dir = mkdtempSync(join(tmpdir(), "ralph-transcript-"));
after(() => rmSync(dir, { recursive: true, force: true }));

const line = (id: string, at: string, input: number, output: number, extra: Record<string, unknown> = {}) =>
  JSON.stringify({
    type: "assistant",
    timestamp: at,
    message: {
      id,
      role: "assistant",
      usage: { input_tokens: input, output_tokens: output, cache_read_input_tokens: 5 },
    },
    ...extra,
  });

describe("readTranscriptUsage", () => {
  const file = join(dir, "session.jsonl");
  writeFileSync(
    file,
    [
      line("old", "2026-12-01T00:00:00Z", 1000, 1000),
      JSON.stringify({ type: "user", timestamp: "2026-12-01T00:01:00Z", message: { content: "hi" } }),
      line("a", "2026-12-01T00:02:00Z", 100, 1),
      line("a", "2026-12-01T00:02:01Z", 100, 20),
      line("b", "2026-12-01T00:03:00Z", 50, 7),
      "not json",
      "",
    ].join("\n"),
  );

  test("counts each message id once (its last line), only from `since` on", () => {
    // Cache reads are a kind of their own, never counted as input.
    assert.deepEqual(readTranscriptUsage(file, new Date("2026-12-01T00:01:00Z")), {
      tokens: { input: 150, output: 27, cacheRead: 10, cacheWrite: 0 },
      costUsd: null,
      model: null,
    });
    assert.deepEqual(readTranscriptUsage(file, null)?.tokens, {
      input: 1150,
      output: 1027,
      cacheRead: 15,
      cacheWrite: 0,
    });
  });

  test("sums costUSD where lines carry it; a missing transcript is null", () => {
    const costed = join(dir, "costed.jsonl");
    writeFileSync(
      costed,
      [
        line("x", "2026-12-01T00:02:00Z", 1, 1, { costUSD: 0.25 }),
        line("y", "2026-12-01T00:03:00Z", 1, 1, { costUSD: 0.5 }),
      ].join("\n"),
    );
    assert.equal(readTranscriptUsage(costed, null)?.costUsd, 0.75);
    assert.equal(readTranscriptUsage(join(dir, "missing.jsonl"), null), null);
  });
});
