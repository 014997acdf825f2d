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

/** Redacts one stream chunk by chunk; `push` returns what may be written now, `end` the rest. */
export class StreamRedactor {
  private readonly values: string[];
  private readonly hold: number;
  private pending = "";

  constructor(values: readonly string[]) {
    this.values = values.map((value) => Buffer.from(value, "utf8").toString("latin1"));
    this.hold = Math.max(MIN_HOLD, ...this.values.map((value) => value.length));
  }

  /** Takes a chunk; returns the redacted bytes that can no longer be part of an unseen secret. */
  push(chunk: Buffer): Buffer {
    this.pending += chunk.toString("latin1");
    if (this.pending.length <= this.hold) return Buffer.alloc(0);
    const ranges = findSecrets(this.pending, this.values);
    let cut = this.pending.length - this.hold;
    // Never cut through a secret: keep all of it for the next look.
    for (const [start, end] of ranges) if (start < cut && end > cut) cut = start;
    if (cut === 0 && this.pending.length < MAX_PENDING) return Buffer.alloc(0);
    if (cut === 0) cut = this.pending.length;
    const out = replaceRanges(this.pending.slice(0, cut), ranges.filter(([, end]) => end <= cut));
    this.pending = this.pending.slice(cut);
    return Buffer.from(out, "latin1");
  }

  /** The rest, redacted. */
  end(): Buffer {
    const out = replaceRanges(this.pending, findSecrets(this.pending, this.values));
    this.pending = "";
    return Buffer.from(out, "latin1");
  }
}
