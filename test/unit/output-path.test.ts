// The agent's output path in fixed memory: lines decoded straight from the chunks they arrive in, and the
// end of a long text kept in a ring. Each must give exactly what the plain string code gives.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { LineSplitter } from "../../src/engine/line-splitter.js";
import { TextTail } from "../../src/util/text-tail.js";
import { commandAdapter } from "../../src/agents/command.js";
import type { AgentEvent } from "../../src/agents/types.js";
import { AgentEventBatcher, TEXT_LIMIT } from "../../src/store/agent-event-batcher.js";

/** A small seeded generator, so that a failure can be replayed. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    return state / 2 ** 31;
  };
}

/** The lines of `bytes` as the splitter's contract says: cut at `max` bytes, decoded, a final CR dropped. */
function expectedLines(bytes: Buffer, max: number, ended: boolean): string[] {
  const parts: Buffer[] = [];
  let start = 0;
  for (let at = bytes.indexOf(10); at !== -1; at = bytes.indexOf(10, start)) {
    parts.push(bytes.subarray(start, at));
    start = at + 1;
  }
  if (ended && start < bytes.length) parts.push(bytes.subarray(start));
  return parts.map((part) => part.subarray(0, max).toString("utf8").replace(/\r$/, ""));
}

describe("LineSplitter", () => {
  test("gives the same lines whatever the chunking: CRLF, UTF-8 split across chunks, lines over the cap", () => {
    const next = random(7);
    const pieces = ["a", "é", "日本", "😀", "\r\n", "\n", "\r", "\n\n", "x".repeat(300), "\uFFFD", "\r\r\n"];
    for (let round = 0; round < 200; round++) {
      let text = "";
      while (text.length < 2000) text += pieces[Math.floor(next() * pieces.length)];
      const bytes = Buffer.concat([Buffer.from(text), next() < 0.3 ? Buffer.from([0xe6, 0x97]) : Buffer.alloc(0)]);
      const max = 1 + Math.floor(next() * 400);
      const lines: string[] = [];
      const splitter = new LineSplitter((line) => lines.push(line), max);
      for (let at = 0; at < bytes.length;) {
        const size = 1 + Math.floor(next() * 120);
        splitter.push(bytes.subarray(at, at + size));
        at += size;
      }
      splitter.end();
      assert.deepEqual(lines, expectedLines(bytes, max, true), `round ${round}`);
    }
  });
});

describe("TextTail", () => {
  test("holds exactly the last characters of what was appended, across wraps, growth, keep and clear", () => {
    const next = random(11);
    const alphabet = ["a", "Z", "é", "😀", "\uD800", "\uDC00", "\n", "日"];
    for (let round = 0; round < 300; round++) {
      const capacity = 1 + Math.floor(next() * 9000);
      const tail = new TextTail(capacity);
      let plain = "";
      for (let step = 0; step < 40; step++) {
        const roll = next();
        if (roll < 0.05) {
          tail.clear();
          plain = "";
        } else if (roll < 0.1) {
          const units = Math.floor(next() * capacity);
          tail.keep(units);
          plain = units === 0 ? "" : plain.slice(-units);
        } else {
          let piece = "";
          const length = next() < 0.1 ? Math.floor(next() * capacity * 2) : Math.floor(next() * 300);
          for (let i = 0; i < length; i++) piece += alphabet[Math.floor(next() * alphabet.length)];
          tail.append(piece);
          plain = (plain + piece).slice(-capacity);
        }
        assert.equal(tail.length, plain.length, `round ${round} step ${step}`);
        assert.equal(tail.text(), plain, `round ${round} step ${step}`);
      }
    }
  });
});

describe("command agent's final message", () => {
  test("is the last 256 KB of its stdout, each line with its newline, however long the output", () => {
    const parser = commandAdapter.parser({ prompt: "x" });
    let plain = "";
    for (let i = 0; i < 40_000; i++) {
      const line = `${i} ${"out ".repeat(i % 50)}😀`;
      parser.line(line);
      plain += `${line}\n`;
    }
    const { finalMessage } = parser.finish("", { code: 0, signal: null });
    assert.ok(plain.length > 1024 * 1024);
    assert.equal(finalMessage, plain.slice(-256 * 1024));
  });
});

/** The batcher's contract written plainly: every event costed by its JSON, joined text and all. */
function plainBatcher(emit: (event: AgentEvent) => void) {
  let lines: string[] = [];
  let length = 0;
  let spent = 0;
  let dropped = 0;
  let output = 0;
  const write = (event: AgentEvent) => {
    const text = event.text;
    const bounded =
      text !== undefined && text.length > TEXT_LIMIT ? { ...event, text: `${text.slice(0, TEXT_LIMIT)}…` } : event;
    const cost = Buffer.byteLength(JSON.stringify(bounded)) + 110;
    if (spent + cost > Math.min(32 * 1024 * 1024, 64 * 1024 + 1.5 * output)) dropped += 1;
    else {
      spent += cost;
      emit(bounded);
    }
  };
  const flush = () => {
    if (lines.length === 0) return;
    const text = lines.join("\n");
    lines = [];
    length = 0;
    write({ kind: "text", text });
  };
  return {
    countOutput: (bytes: number) => (output += bytes),
    push(event: AgentEvent) {
      const text = event.text ?? "";
      if (event.kind !== "text" || event.tool !== undefined || text.length > TEXT_LIMIT) {
        flush();
        write(event);
        return;
      }
      if (length + text.length + 1 > TEXT_LIMIT) flush();
      lines.push(text);
      length += text.length + 1;
    },
    end() {
      flush();
      if (dropped > 0)
        emit({
          kind: "other",
          text: `${dropped} output event(s) over the event log's budget left out; the full output is in iter-001.log`,
        });
    },
  };
}

describe("AgentEventBatcher", () => {
  test("writes and leaves out exactly the events the plain contract does, right at the budget's edge", () => {
    const next = random(5);
    const alphabet = ["a", " ", '"', "\\", "\u0001", "\n", "é", "😀", "\uD800", "\uFFFD", "x".repeat(40)];
    const text = (most: number) => {
      let out = "";
      const length = Math.floor(next() * most);
      while (out.length < length) out += alphabet[Math.floor(next() * alphabet.length)];
      return out;
    };
    for (let round = 0; round < 5; round++) {
      const got: AgentEvent[] = [];
      const want: AgentEvent[] = [];
      const batcher = new AgentEventBatcher(
        (event) => got.push(event),
        (value) => value,
        "iter-001.log",
      );
      const plain = plainBatcher((event) => want.push(event));
      for (let step = 0; step < 20_000; step++) {
        const bytes = Math.floor(next() * 250);
        batcher.countOutput(bytes);
        plain.countOutput(bytes);
        const roll = next();
        const event: AgentEvent =
          roll < 0.05
            ? { kind: "tool_use", tool: "Bash", text: text(100) }
            : roll < 0.07
              ? { kind: "text", text: text(3 * TEXT_LIMIT) }
              : { kind: "text", text: text(400) };
        batcher.push(event);
        plain.push(event);
      }
      batcher.end();
      plain.end();
      assert.ok(want.length > 1000 && /left out/.test(want.at(-1)?.text ?? ""), "the run reaches the budget");
      assert.deepEqual(got, want, `round ${round}`);
    }
  });
});
