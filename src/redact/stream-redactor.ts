// Redacting a byte stream as it passes: a secret split across two chunks must still be found.
//
// Bytes are handled as latin1 text, one character per byte, so output that is not UTF-8 passes
// through unchanged; secret values are matched by their UTF-8 bytes. The last HOLD bytes are kept
// back until more output (or the end) shows whether they begin a secret.
import { findSecrets, replaceRanges } from "./secrets.js";

/** Bytes kept back at least; more when a known secret is longer. */
const MIN_HOLD = 512;
/** A run of output this long with no safe place to cut is redacted and released as it is. */
const MAX_PENDING = 256 * 1024;
const NOTHING = Buffer.alloc(0);

/** Redacts one stream chunk by chunk; `push` returns what may be written now, `end` the rest. */
export class StreamRedactor {
  private readonly values: string[];
  private readonly hold: number;
  /** The bytes kept back, copied: a slice of a chunk's text would keep the whole text alive. */
  private held: Buffer = NOTHING;

  constructor(values: readonly string[]) {
    this.values = values.map((value) => Buffer.from(value, "utf8").toString("latin1"));
    this.hold = Math.max(MIN_HOLD, ...this.values.map((value) => value.length));
  }

  /** Takes a chunk; returns the redacted bytes that can no longer be part of an unseen secret. */
  push(chunk: Buffer): Buffer {
    const out = this.pushText(chunk);
    return out === "" ? NOTHING : Buffer.from(out, "latin1");
  }

  /** As `push`, with the bytes as latin1 text (one character per byte), for a writer that copies them. */
  pushText(chunk: Buffer): string {
    const text =
      this.held.length === 0 ? chunk.toString("latin1") : this.held.toString("latin1") + chunk.toString("latin1");
    if (text.length <= this.hold) return this.keep(text, "");
    const ranges = findSecrets(text, this.values);
    let cut = text.length - this.hold;
    // Never cut through a secret: keep all of it for the next look.
    for (const [start, end] of ranges) if (start < cut && end > cut) cut = start;
    if (cut === 0 && text.length < MAX_PENDING) return this.keep(text, "");
    if (cut === 0) cut = text.length;
    return this.keep(
      text.slice(cut),
      replaceRanges(
        text.slice(0, cut),
        ranges.filter(([, end]) => end <= cut),
      ),
    );
  }

  /** The rest, redacted. */
  end(): Buffer {
    return Buffer.from(this.endText(), "latin1");
  }

  /** As `end`, as latin1 text. */
  endText(): string {
    const text = this.held.toString("latin1");
    this.held = NOTHING;
    return replaceRanges(text, findSecrets(text, this.values));
  }

  private keep(rest: string, out: string): string {
    this.held = rest === "" ? NOTHING : Buffer.from(rest, "latin1");
    return out;
  }
}
