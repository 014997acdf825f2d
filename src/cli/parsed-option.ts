// A command-line value read with one of util/parse-value's parsers, or the usage error saying what was expected.
import { runOption, type RunSettings } from "../config/run-options.js";
import type { Parsed } from "../util/parse-value.js";
import { UsageError } from "./usage-error.js";

/** `raw` (given as `flag`) parsed by `parse`; a value it refuses is a usage error naming the flag and the value. */
export function parsedOption<T>(flag: string, raw: string, parse: (raw: unknown) => Parsed<T>): T {
  const parsed = parse(raw);
  if (!parsed.ok) throw new UsageError(`${flag}: expected ${parsed.expected}, got ${JSON.stringify(raw)}`);
  return parsed.value;
}

/** `raw` given to run setting `key`'s flag, read by that option's own declared parser. */
export function parsedSetting<K extends keyof RunSettings>(key: K, raw: string): RunSettings[K] {
  const spec = runOption(key);
  return parsedOption(spec.flag, raw, spec.parse);
}
