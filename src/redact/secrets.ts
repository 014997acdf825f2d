// Finding credentials in text: values of secret-looking variables, and well-known key shapes.

/** What a secret is replaced with. */
export const REDACTED = "[REDACTED]";

const SECRET_NAME =
  /(^|_)(API_?KEY|KEY|TOKEN|SECRET|PASSWORD|PASSWD|ACCESS_KEY|PRIVATE_KEY|AUTH|CREDENTIALS?)$|^(API_?KEY|TOKEN|SECRET)(_|$)/i;
// Values shorter than this are not treated as secrets: redacting every "test" or "1" helps nobody.
const MIN_SECRET_LENGTH = 8;
// Well-known key shapes, found even when no variable holds them. Each match is replaced whole.
const KEY_SHAPES: readonly RegExp[] = [
  /\bsk-[A-Za-z0-9_-]{16,}/g, // Anthropic (sk-ant-…), OpenAI (sk-…, sk-proj-…)
  /\b(?:ghp|gho|ghs|ghu|ghr)_[A-Za-z0-9]{20,}/g,
  /\bgithub_pat_[A-Za-z0-9_]{20,}/g,
  /\bAIza[A-Za-z0-9_-]{30,}/g,
  /\bxox[abeprs]-[A-Za-z0-9-]{10,}/g,
  /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/g,
  /(?<=\bBearer\s{1,8})[A-Za-z0-9._~+/-]{16,}=*/gi,
];

/** The fewest characters a key shape above matches (xox?- and 10 more). */
const SHORTEST_KEY_SHAPE = 15;

/** Whether a variable name looks like it holds a credential. */
export function isSecretName(name: string): boolean {
  return SECRET_NAME.test(name);
}

/** The credential values in `env` worth redacting, longest first (a secret containing another is replaced whole). */
export function secretValues(env: NodeJS.ProcessEnv): string[] {
  const values = new Set<string>();
  for (const [name, value] of Object.entries(env)) {
    if (value !== undefined && value.length >= MIN_SECRET_LENGTH && isSecretName(name)) values.add(value);
  }
  return [...values].sort((a, b) => b.length - a.length);
}

/** A [start, end) range of text to replace. */
export type Range = readonly [number, number];

/** Sorted, non-overlapping ranges of `text` that hold a secret from `values` or a key shape. */
export function findSecrets(text: string, values: readonly string[]): Range[] {
  const found: Array<[number, number]> = [];
  // Shorter than every value and key shape: most of an event's fields (a type, a count, a word).
  if (text.length < SHORTEST_KEY_SHAPE && values.every((value) => text.length < value.length)) return found;
  for (const value of values) {
    for (let at = text.indexOf(value); at !== -1; at = text.indexOf(value, at + value.length))
      found.push([at, at + value.length]);
  }
  for (const shape of KEY_SHAPES) {
    // exec() on the shape itself: matchAll() would copy the expression at every call. No shape matches "".
    shape.lastIndex = 0;
    for (let match = shape.exec(text); match !== null; match = shape.exec(text))
      found.push([match.index, match.index + match[0].length]);
  }
  if (found.length <= 1) return found;
  found.sort((a, b) => a[0] - b[0] || b[1] - a[1]);
  const merged: Array<[number, number]> = [];
  for (const range of found) {
    const last = merged.at(-1);
    if (last && range[0] <= last[1]) last[1] = Math.max(last[1], range[1]);
    else merged.push([range[0], range[1]]);
  }
  return merged;
}

/** `text` with each range replaced by [REDACTED]. */
export function replaceRanges(text: string, ranges: readonly Range[]): string {
  if (ranges.length === 0) return text;
  let result = "";
  let from = 0;
  for (const [start, end] of ranges) {
    result += text.slice(from, start) + REDACTED;
    from = end;
  }
  return result + text.slice(from);
}
