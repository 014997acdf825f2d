// A command-line value read with one of util/parse-value's parsers, or the usage error saying what was expected.
import type { Parsed } from "../util/parse-value.js";
import { UsageError } from "./usage-error.js";

/** `raw` (given as `flag`) parsed by `parse`; a value it refuses is a usage error naming the flag and the value. */
export function parsedOption<T>(flag: string, raw: string, parse: (raw: unknown) => Parsed<T>): T {
  const parsed = parse(raw);
  if (!parsed.ok) throw new UsageError(`${flag}: expected ${parsed.expected}, got ${JSON.stringify(raw)}`);
  return parsed.value;
}
