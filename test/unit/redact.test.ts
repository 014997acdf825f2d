// Redaction: key shapes and secret values, whole or split across stream chunks, and event text cut
// only after redaction.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { Redactor } from "../../src/redact/redactor.js";
import { findSecrets } from "../../src/redact/secrets.js";
import { AgentEventBatcher, TEXT_LIMIT } from "../../src/store/agent-event-batcher.js";
import type { AgentEvent } from "../../src/agents/types.js";

const KEY = "sk-ant-api03-Zx8Qv2Lm9Rt4Kp7Wn3Hy6Bc1Df5Gj0Ns";
const VALUE = "plain-value-without-shape";
const redactor = new Redactor({ MY_SERVICE_SECRET: VALUE, SHORT_TOKEN: "abc", HOME: "/root/some/long/path" });

describe("Redactor", () => {
  test("replaces secret values and key shapes, keeps short values and other variables", () => {
    const text = `a ${KEY} b ${VALUE} c abc /root/some/long/path Bearer abcdefghijklmnopqrstu AKIAIOSFODNN7EXAMPLE`;
    assert.equal(
      redactor.text(text),
      "a [REDACTED] b [REDACTED] c abc /root/some/long/path Bearer [REDACTED] [REDACTED]",
    );
  });

  test("a text exactly as long as the shortest key shape, or as a secret value, is still searched", () => {
    // xox?- and ten more: the shortest text a key shape matches (the quick return for short texts stops below it).
    assert.deepEqual(findSecrets("xoxb-0123456789", []), [[0, 15]]);
    assert.deepEqual(findSecrets("xoxb-012345678", []), []);
    assert.deepEqual(findSecrets("pw123456", ["pw123456"]), [[0, 8]]);
    assert.deepEqual(
      findSecrets("a sk-ant-0123456789abcdef b sk-ant-fedcba9876543210 c", []),
      [
        [2, 25],
        [28, 51],
      ],
      "every match of a shape, not just the first",
    );
  });

  test("redacts every string inside an object, leaving keys and other values", () => {
    assert.deepEqual(redactor.deep({ text: KEY, n: 1, list: [VALUE, null], nested: { k: `x${VALUE}` } }), {
      text: "[REDACTED]",
      n: 1,
      list: ["[REDACTED]", null],
      nested: { k: "x[REDACTED]" },
    });
  });

  test("a stream finds a secret split at any byte across two chunks, and passes other bytes unchanged", () => {
    const before = Buffer.from([0xff, 0xfe, 0x00, 0x41]); // not UTF-8
    for (const secret of [KEY, VALUE]) {
      const whole = Buffer.concat([before, Buffer.from(`${"x".repeat(700)} ${secret} tail\n`)]);
      const expected = Buffer.concat([before, Buffer.from(`${"x".repeat(700)} [REDACTED] tail\n`)]);
      for (let cut = 1; cut < whole.length; cut += 7) {
        const stream = redactor.stream();
        const out = Buffer.concat([
          stream.push(whole.subarray(0, cut)),
          stream.push(whole.subarray(cut)),
          stream.end(),
        ]);
        assert.deepEqual(out, expected, `cut at ${cut}`);
      }
    }
  });

  test("known-false control: chunks redacted one by one leak a split key", () => {
    const cut = 10; // "sk-ant-api": too short to look like a key by itself
    const pieces = [KEY.slice(0, cut), KEY.slice(cut)].map((piece) => redactor.text(piece)).join("");
    assert.ok(pieces.includes(KEY.slice(0, cut)));
  });
});

describe("AgentEventBatcher", () => {
  const collect = (): { events: AgentEvent[]; batcher: AgentEventBatcher } => {
    const events: AgentEvent[] = [];
    return {
      events,
      batcher: new AgentEventBatcher(
        (event) => events.push(event),
        (text) => redactor.text(text),
        "iter-001.log",
      ),
    };
  };

  test("coalesces text lines into events of at most the limit", () => {
    const { events, batcher } = collect();
    batcher.countOutput(100_000);
    for (let i = 0; i < 10_000; i++) batcher.push({ kind: "text", text: "y" });
    batcher.end();
    assert.ok(events.length < 10, `${events.length} events`);
    assert.equal(events.map((event) => event.text).join("\n"), Array(10_000).fill("y").join("\n"));
    assert.ok(events.every((event) => (event.text ?? "").length <= TEXT_LIMIT));
  });

  test("cuts a long text only after redacting it: a key across the cut is not left half visible", () => {
    const { events, batcher } = collect();
    const text = `${"x".repeat(TEXT_LIMIT - 10)} ${KEY}`;
    batcher.countOutput(text.length);
    batcher.push({ kind: "text", text });
    batcher.end();
    assert.ok(!(events[0]?.text ?? "").includes(KEY.slice(0, 6)), events[0]?.text?.slice(-20));
  });

  test("keeps the events of an iteration within its byte budget, and says what it left out", () => {
    const { events, batcher } = collect();
    const output = 1_000_000;
    batcher.countOutput(output);
    // Events that cost far more than the output they came from (tiny lines, structured kinds).
    for (let i = 0; i < 200_000; i++) batcher.push({ kind: "tool_use", tool: "Bash", text: "ls" });
    batcher.end();
    const bytes = events.reduce((sum, event) => sum + Buffer.byteLength(JSON.stringify(event)) + 110, 0);
    assert.ok(bytes <= 64 * 1024 + 1.5 * output + 1000, `${bytes} bytes`);
    assert.match(events.at(-1)?.text ?? "", /left out; the full output is in iter-001\.log/);
  });
});
