// Merges run options from flags, RALPH_* environment, ralph.yaml and defaults, in that order of precedence.
import { RUN_OPTION_SPECS, defaultSettings, type RunSettings } from "./run-options.js";
import type { YamlDefaults } from "./ralph-yaml.js";

/** Flag values as given on the command line, keyed by flag (e.g. "--max-iterations"). */
export type FlagValues = ReadonlyMap<string, unknown>;

/** Settings, or one line naming the bad option, its source, and what was expected. */
export type SettingsResult = { ok: true; settings: RunSettings } | { ok: false; message: string };

/** Resolves every run option: flag > RALPH_* env > ralph.yaml > default. */
export function resolveSettings(flags: FlagValues, env: NodeJS.ProcessEnv, yaml: YamlDefaults): SettingsResult {
  const settings = defaultSettings() as unknown as Record<string, unknown>;
  for (const option of RUN_OPTION_SPECS) {
    const fromYaml = option.yaml === null ? undefined : yaml.values.get(option.yaml);
    const fromEnv = option.env === null ? undefined : env[option.env];
    const candidates: Array<{ present: boolean; raw: unknown; where: string }> = [
      { present: flags.has(option.flag), raw: flags.get(option.flag), where: option.flag },
      { present: fromEnv !== undefined, raw: fromEnv, where: `environment variable ${option.env}` },
      {
        present: fromYaml !== undefined,
        raw: fromYaml?.value,
        where: `${yaml.file}: line ${fromYaml?.line}: ${option.yaml}`,
      },
    ];
    // Every value given is checked, also one a higher source overrides: a typo in ralph.yaml must not wait
    // for the day the flag is left off.
    let chosen: { value: unknown } | null = null;
    for (const candidate of candidates.filter((one) => one.present)) {
      const parsed = option.parse(candidate.raw);
      if (!parsed.ok) {
        const hint = parsed.hint === undefined ? "" : ` (${parsed.hint})`;
        return {
          ok: false,
          message: `${candidate.where}: expected ${parsed.expected}, got ${JSON.stringify(candidate.raw)}${hint}`,
        };
      }
      chosen ??= { value: parsed.value };
    }
    if (chosen) settings[option.key] = chosen.value;
  }
  return { ok: true, settings: settings as unknown as RunSettings };
}
