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
    const fromYaml = yaml.values.get(option.yaml);
    const candidates: Array<{ present: boolean; raw: unknown; where: string }> = [
      { present: flags.has(option.flag), raw: flags.get(option.flag), where: option.flag },
      { present: env[option.env] !== undefined, raw: env[option.env], where: `environment variable ${option.env}` },
      { present: fromYaml !== undefined, raw: fromYaml?.value, where: `${yaml.file}: line ${fromYaml?.line}: ${option.yaml}` },
    ];
    const chosen = candidates.find((candidate) => candidate.present);
    if (!chosen) continue;
    const parsed = option.parse(chosen.raw);
    if (!parsed.ok) {
      return { ok: false, message: `${chosen.where}: expected ${parsed.expected}, got ${JSON.stringify(chosen.raw)}` };
    }
    settings[option.key] = parsed.value;
  }
  return { ok: true, settings: settings as unknown as RunSettings };
}
