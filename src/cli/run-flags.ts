// The flags of `ralph run` as commander options, built from their declarations (config/run-options.ts), and
// reading which ones the user gave. Kept light, so that building the command line loads nothing of the loop.
import { Option, type Command } from "commander";
import { RUN_FLAG_SPECS, RUN_OPTION_SPECS, optionHelp, type FlagSpec, type OptionSpec } from "../config/run-options.js";
import { parseRunId } from "../util/parse-value.js";

function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

/** The commander option for a declared run option; `help` replaces its help line (another command's wording). */
export function declaredOption(spec: OptionSpec | FlagSpec, help?: string): Option {
  const option = new Option(spec.flags, help ?? ("key" in spec ? optionHelp(spec) : spec.help));
  if (spec.repeatable) option.argParser(collect);
  if (spec.internal) option.hideHelp();
  return option;
}

/** Adds every `ralph run` option to a command, from their declarations. */
export function addRunOptions(command: Command, specs: readonly OptionSpec[] = RUN_OPTION_SPECS): Command {
  for (const spec of specs) command.addOption(declaredOption(spec));
  for (const spec of RUN_FLAG_SPECS) command.addOption(declaredOption(spec));
  return command;
}

/**
 * A `--name` followed by a word starting with `-` (`--name -V`): the parser would take that word for a flag
 * (or for the value), so it is refused up front with what a run id must be.
 */
export function dashedName(words: readonly string[]): string | null {
  const at = words.indexOf("--name");
  const value = at === -1 ? undefined : words[at + 1];
  if (value === undefined || !value.startsWith("-")) return null;
  const parsed = parseRunId(value);
  return parsed.ok ? null : `--name: expected ${parsed.expected}, got ${JSON.stringify(value)}`;
}

/** The flags the user actually gave, keyed by long flag name. */
export function givenFlags(command: Command): Map<string, unknown> {
  const flags = new Map<string, unknown>();
  for (const option of command.options) {
    const name = option.attributeName();
    if (option.long && command.getOptionValueSource(name) === "cli")
      flags.set(option.long, command.getOptionValue(name));
  }
  return flags;
}
