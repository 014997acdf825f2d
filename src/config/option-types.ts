// The kinds of value an option takes: for each, its parser, how ralph.yaml's JSON Schema describes it, how
// its default reads in --help and the reference, and the placeholder its flag shows.
import {
  formatDuration,
  parseArgumentList,
  parseBoolean,
  parseChoice,
  parseChoiceList,
  parseCommandWords,
  parseCount,
  parseDuration,
  parsePositiveCount,
  parsePositiveDuration,
  parseRunId,
  parseSize,
  parseTaskIndex,
  parseText,
  parseTextList,
  parseUsd,
  type Parsed,
} from "../util/parse-value.js";

/** A JSON Schema fragment. */
export type JsonSchema = Record<string, unknown>;

/** How values of one kind are read, described and shown. */
export interface OptionType<T> {
  parse: (raw: unknown) => Parsed<T>;
  /** What ralph.yaml may hold for it. */
  schema: JsonSchema;
  /** The default as a person reads it in --help, or null when the default is "none"/"off" (nothing is shown). */
  show: (value: T) => string | null;
  /** A short name of the kind for the reference ("duration", "whole number"). */
  kind: string;
}

const TEXT_OR_LIST: JsonSchema = {
  anyOf: [
    { type: "string", minLength: 1 },
    { type: "array", items: { type: "string" } },
  ],
};
const BOOLEAN_WORDS = ["true", "false", "yes", "no", "on", "off", "1", "0"];

export const count: OptionType<number> = {
  parse: parseCount,
  schema: { type: "integer", minimum: 0 },
  show: String,
  kind: "whole number",
};
export const positiveCount: OptionType<number> = {
  parse: parsePositiveCount,
  schema: { type: "integer", minimum: 1 },
  show: String,
  kind: "whole number ≥ 1",
};
const DURATION_SCHEMA: JsonSchema = {
  anyOf: [
    { type: "number", minimum: 0 },
    { type: "string", pattern: "^\\s*[0-9]+(\\.[0-9]+)?(ms|s|m|h)?\\s*$" },
  ],
};
export const duration: OptionType<number> = {
  parse: parseDuration,
  schema: DURATION_SCHEMA,
  show: (ms) => (ms === 0 ? "0" : formatDuration(ms)),
  kind: "duration",
};
export const positiveDuration: OptionType<number> = { ...duration, parse: parsePositiveDuration, kind: "duration > 0" };
export const usd: OptionType<number> = {
  parse: parseUsd,
  schema: {
    anyOf: [
      { type: "number", minimum: 0 },
      { type: "string", pattern: "^\\s*[0-9]+(\\.[0-9]+)?\\s*$" },
    ],
  },
  show: (value) => `$${value}`,
  kind: "US dollars",
};
export const size: OptionType<number> = {
  parse: parseSize,
  schema: {
    anyOf: [
      { type: "integer", minimum: 1048576 },
      { type: "string", pattern: "^\\s*[0-9]+(\\.[0-9]+)?\\s*[kmgtKMGT]?([iI]?[bB])?\\s*$" },
    ],
  },
  show: String,
  kind: "size",
};
export const boolean: OptionType<boolean> = {
  parse: parseBoolean,
  schema: { anyOf: [{ type: "boolean" }, { enum: BOOLEAN_WORDS }] },
  show: (value) => (value ? "on" : null),
  kind: "switch",
};
export const text: OptionType<string> = {
  parse: parseText,
  schema: { type: "string", minLength: 1 },
  show: (value) => value,
  kind: "text",
};
export const textList: OptionType<string[]> = {
  parse: parseTextList,
  schema: TEXT_OR_LIST,
  show: (value) => (value.length === 0 ? null : value.join(", ")),
  kind: "texts",
};
export const argumentList: OptionType<string[]> = {
  parse: parseArgumentList,
  schema: TEXT_OR_LIST,
  show: (value) => (value.length === 0 ? null : value.join(" ")),
  kind: "arguments",
};
export const commandWords: OptionType<string[]> = {
  parse: parseCommandWords,
  schema: TEXT_OR_LIST,
  show: (value) => value.join(" "),
  kind: "command",
};
export const runId: OptionType<string> = {
  parse: parseRunId,
  schema: { type: "string", pattern: "^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$" },
  show: (value) => value,
  kind: "run id",
};
export const taskIndex: OptionType<number | "job"> = {
  parse: parseTaskIndex,
  schema: { anyOf: [{ type: "integer", minimum: 0 }, { const: "job" }] },
  show: String,
  kind: "position or job",
};

/** One word of `choices`. */
export function choice<T extends string>(choices: readonly T[]): OptionType<T> {
  return {
    parse: parseChoice(choices),
    schema: { enum: [...choices] },
    show: (value) => value,
    kind: choices.join(" | "),
  };
}

/** A list of words of `choices` (a YAML list or a comma-separated text). */
export function choiceList<T extends string>(choices: readonly T[]): OptionType<T[]> {
  return {
    parse: parseChoiceList(choices),
    schema: { anyOf: [{ type: "array", items: { enum: [...choices] }, minItems: 1 }, { type: "string" }] },
    show: (value) => (value.length === 0 ? null : value.join(", ")),
    kind: `list of ${choices.join(" | ")}`,
  };
}

/** The same kind, with null ("not set") as its default. */
export function nullable<T>(type: OptionType<T>): OptionType<T | null> {
  return { ...type, parse: type.parse, show: (value) => (value === null ? null : type.show(value)) };
}

/** A kind of its own (the sandbox's mapping, say): its parser, schema, and how its default reads. */
export function custom<T>(
  parse: (raw: unknown) => Parsed<T>,
  schema: JsonSchema,
  show: (value: T) => string | null,
  kind: string,
): OptionType<T> {
  return { parse, schema, show, kind };
}
