// Keeps events.jsonl proportional to the agent's output. Plain output lines are coalesced into
// events of up to TEXT_LIMIT characters (one event per line made `yes` cost 55 bytes of log per byte),
// and the events of one iteration may not take more than BUDGET_FACTOR × its output bytes
// (+ BUDGET_FLOOR, at most BUDGET_CAP): beyond that they are counted, not written; iter-NNN.log has it all.
import type { AgentEvent } from "../agents/types.js";

/** Longest text kept in one event; the full output is in iter-NNN.log. */
export const TEXT_LIMIT = 4096;
/** Event bytes allowed per byte of agent output. */
const BUDGET_FACTOR = 1.5;
/** Event bytes allowed whatever the output (an agent's first lines are always shown). */
const BUDGET_FLOOR = 64 * 1024;
/** Event bytes allowed per iteration at most. */
const BUDGET_CAP = 32 * 1024 * 1024;
/** Coalesced text waits at most this long, so --live and `ralph logs -f` stay live. */
const FLUSH_MS = 100;
/** Bytes of the event envelope (v, ts, run, type, iteration) added to each event's own fields. */
const ENVELOPE_BYTES = 110;
/** `{"kind":"text","text":""}`: a text event's JSON besides its text. */
const TEXT_EVENT_BYTES = 25;

/** Batches one iteration's agent events; `emit` writes one. */
export class AgentEventBatcher {
  private lines: string[] = [];
  /** Whether the coalesced lines are output (`text`) or the agent's stderr (`stderr`). */
  private kind: "text" | "stderr" = "text";
  private length = 0;
  /** The lines' UTF-8 bytes, each with its newline: their JSON takes at least this much. */
  private bytes = 0;
  private timer: NodeJS.Timeout | null = null;
  private outputBytes = 0;
  private spent = 0;
  private dropped = 0;

  /** `redact` runs before a text is cut, so a cut never splits a secret into two harmless halves. */
  constructor(
    private readonly emit: (event: AgentEvent) => void,
    private readonly redact: (text: string) => string,
    private readonly logName: string,
  ) {}

  /** Counts agent output: the event budget grows with it. */
  countOutput(bytes: number): void {
    this.outputBytes += bytes;
  }

  /** Takes one parsed event. */
  push(event: AgentEvent): void {
    const text = event.text ?? "";
    if (
      (event.kind !== "text" && event.kind !== "stderr") ||
      event.tool !== undefined ||
      event.sessionId !== undefined ||
      text.length > TEXT_LIMIT
    ) {
      this.flush();
      this.write(event);
      return;
    }
    // Output and stderr lines are coalesced apart, so the order they were written in stays.
    if (event.kind !== this.kind || this.length + text.length + 1 > TEXT_LIMIT) this.flush();
    this.kind = event.kind;
    this.lines.push(text);
    this.length += text.length + 1;
    this.bytes += Buffer.byteLength(text) + 1;
    this.timer ??= setTimeout(() => this.flush(), FLUSH_MS).unref();
  }

  /** Writes the coalesced text now. */
  flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.lines.length === 0) return;
    // Past the budget, the text is not even joined: its JSON would be at least this long.
    const over = this.certainlyOver(this.bytes - 1 + TEXT_EVENT_BYTES);
    const text = over ? "" : this.lines.join("\n");
    this.lines = [];
    this.length = 0;
    this.bytes = 0;
    if (over) this.dropped += 1;
    else this.write({ kind: this.kind, text });
  }

  /** Flushes, and says how many events were left out (the iteration is over). */
  end(): void {
    this.flush();
    if (this.dropped === 0) return;
    this.emit({
      kind: "other",
      text: `${this.dropped} output event(s) over the event log's budget left out; the full output is in ${this.logName}`,
    });
    this.dropped = 0;
  }

  private write(event: AgentEvent): void {
    const text = event.text;
    // JSON escapes only lengthen a text: an event whose text alone is past the budget is not written out.
    if (text !== undefined && text.length <= TEXT_LIMIT && this.certainlyOver(Buffer.byteLength(text))) {
      this.dropped += 1;
      return;
    }
    const bounded =
      text !== undefined && text.length > TEXT_LIMIT
        ? { ...event, text: `${this.redact(text).slice(0, TEXT_LIMIT)}…` }
        : event;
    const cost = Buffer.byteLength(JSON.stringify(bounded)) + ENVELOPE_BYTES;
    if (this.spent + cost > this.budget()) {
      this.dropped += 1;
      return;
    }
    this.spent += cost;
    this.emit(bounded);
  }

  private budget(): number {
    return Math.min(BUDGET_CAP, BUDGET_FLOOR + BUDGET_FACTOR * this.outputBytes);
  }

  /** Whether an event whose JSON takes at least `bytes` would be over the budget (written as it is, it would). */
  private certainlyOver(bytes: number): boolean {
    return this.spent + bytes + ENVELOPE_BYTES > this.budget();
  }
}
