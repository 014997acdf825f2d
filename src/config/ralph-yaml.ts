// Reads and validates ralph.yaml: run defaults in snake_case, each bad key or value named with its line.
import { readFileSync } from "node:fs";
import { LineCounter, parseDocument, isMap, isScalar, type Pair } from "yaml";
import { RUN_OPTION_SPECS } from "./run-options.js";
import type { JsonSchema } from "./option-types.js";
import { closestWord } from "../util/parse-value.js";

/** Raw values from ralph.yaml keyed by yaml name, with each key's line for error messages. */
export interface YamlDefaults {
  file: string;
  values: Map<string, { value: unknown; line: number }>;
}

/** A ralph.yaml key that is no `ralph run` option: what it holds, for the schema and the reference. */
export interface YamlKeySpec {
  key: string;
  help: string;
  schema: JsonSchema;
}

const CRITERION_SCHEMA: JsonSchema = {
  anyOf: [
    { type: "string", minLength: 1 },
    {
      type: "object",
      properties: {
        type: { enum: ["command", "file_exists", "no_files", "tasks_done", "review"] },
        check: { type: "string" },
      },
      additionalProperties: true,
    },
  ],
};

/** Extra keys that ralph.yaml accepts besides the run options. */
export const YAML_ONLY_KEYS: readonly YamlKeySpec[] = [
  {
    key: "completion_criteria",
    help: "the checks that must all pass before the run ends DONE: a list of {type, check} (types command, file_exists, no_files, tasks_done, review); see [completion and tasks](../completion-and-tasks.md)",
    schema: { type: "array", items: CRITERION_SCHEMA },
  },
  {
    key: "notify",
    help: "where events go: a list of `- command: CMD`, `- webhook: URL` (with `format: json|slack`) or `- desktop: true`, each with optional `events:`; see [notifications](../notifications.md)",
    schema: { type: "array", items: { type: "object" } },
  },
  {
    key: "budget",
    help: "the project's spend caps: `daily` and `weekly` in US dollars (UTC days, weeks from Monday), `on_exhausted: stop` (BUDGET_EXCEEDED) or `wait` (for the next day or week); the same keys in the user's `~/.config/ralph/config.yaml` hold for every project; see [spend and budgets](../spend.md)",
    schema: {
      type: "object",
      additionalProperties: false,
      properties: {
        daily: { anyOf: [{ type: "number", minimum: 0 }, { type: "string" }] },
        weekly: { anyOf: [{ type: "number", minimum: 0 }, { type: "string" }] },
        on_exhausted: { enum: ["stop", "wait"] },
      },
    },
  },
];

/** Every key ralph.yaml accepts. */
export function ralphYamlKeys(): string[] {
  return [
    ...RUN_OPTION_SPECS.flatMap((spec) => (spec.yaml === null ? [] : [spec.yaml])),
    ...YAML_ONLY_KEYS.map((spec) => spec.key),
  ];
}

/** Loads ralph.yaml; a missing file gives empty defaults, anything malformed a message. */
export function loadRalphYaml(file: string): { ok: true; defaults: YamlDefaults } | { ok: false; message: string } {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return { ok: true, defaults: { file, values: new Map() } };
    return { ok: false, message: `${file}: cannot be read (${(error as NodeJS.ErrnoException).code ?? "error"})` };
  }
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false });
  const firstError = doc.errors[0];
  if (firstError) {
    const line = lineCounter.linePos(firstError.pos[0]).line;
    return {
      ok: false,
      message: `${file}: line ${line}: invalid YAML (${firstError.code.toLowerCase().replace(/_/g, " ")})`,
    };
  }
  const values = new Map<string, { value: unknown; line: number }>();
  if (doc.contents === null) return { ok: true, defaults: { file, values } };
  if (!isMap(doc.contents))
    return { ok: false, message: `${file}: line 1: expected a mapping of option names to values` };
  const keys = ralphYamlKeys();
  const known = new Set<string>(keys);
  for (const pair of doc.contents.items as Pair[]) {
    const key = isScalar(pair.key) ? String(pair.key.value) : String(pair.key);
    const line = isScalar(pair.key) && pair.key.range ? lineCounter.linePos(pair.key.range[0]).line : 1;
    if (!known.has(key)) {
      const near = closestWord(key.replace(/-/g, "_"), keys);
      const hint =
        near === null
          ? "; the keys are ralph run's options in snake_case (ralph run --help)"
          : ` (did you mean ${near}?)`;
      return { ok: false, message: `${file}: line ${line}: unknown key "${key}"${hint}` };
    }
    const node = pair.value;
    // A number is read from its text, by the same parser as the flag: `1e1`, `0x2` or `2.0` is not a count.
    const asWritten =
      isScalar(node) && typeof node.value === "number" && typeof node.source === "string" ? node.source : undefined;
    const value =
      asWritten ??
      (node && typeof node === "object" && "toJSON" in node ? (node as { toJSON(): unknown }).toJSON() : node);
    values.set(key, { value, line });
  }
  return { ok: true, defaults: { file, values } };
}
