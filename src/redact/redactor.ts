// Redaction of credentials in everything a run writes: strings, event objects, and raw byte streams.
import { findSecrets, replaceRanges, secretValues } from "./secrets.js";
import { StreamRedactor } from "./stream-redactor.js";

/** Redacts the credential values of one environment, plus well-known key shapes. */
export class Redactor {
  private readonly values: string[];

  constructor(env: NodeJS.ProcessEnv) {
    this.values = secretValues(env);
  }

  /** `text` with secrets replaced by [REDACTED]. */
  text(text: string): string {
    return replaceRanges(text, findSecrets(text, this.values));
  }

  /** A copy of `value` with every string in it (keys left alone) redacted. */
  deep<T>(value: T): T {
    if (typeof value === "string") return this.text(value) as T;
    if (Array.isArray(value)) return value.map((item: unknown) => this.deep(item)) as T;
    if (value !== null && typeof value === "object") {
      const copy: Record<string, unknown> = {};
      for (const [key, item] of Object.entries(value)) copy[key] = this.deep(item);
      return copy as T;
    }
    return value;
  }

  /** A redactor for one byte stream (a secret split across chunks is still found). */
  stream(): StreamRedactor {
    return new StreamRedactor(this.values);
  }
}
