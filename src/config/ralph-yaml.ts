// Reads and validates ralph.yaml: run defaults in snake_case, each bad key or value named with its line.
import { readFileSync } from "node:fs";
import { LineCounter, parseDocument, isMap, isScalar, type Pair } from "yaml";
import { RUN_OPTION_SPECS } from "./run-options.js";

/** Raw values from ralph.yaml keyed by yaml name, with each key's line for error messages. */
export interface YamlDefaults {
  file: string;
  values: Map<string, { value: unknown; line: number }>;
}

/** Extra keys that ralph.yaml accepts besides the run options. */
const YAML_ONLY_KEYS = ["completion_criteria", "notify", "budget"] as const;

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
    return { ok: false, message: `${file}: line ${line}: invalid YAML (${firstError.code.toLowerCase().replace(/_/g, " ")})` };
  }
  const values = new Map<string, { value: unknown; line: number }>();
  if (doc.contents === null) return { ok: true, defaults: { file, values } };
  if (!isMap(doc.contents)) return { ok: false, message: `${file}: line 1: expected a mapping of option names to values` };
  const known = new Set<string>([...RUN_OPTION_SPECS.map((s) => s.yaml), ...YAML_ONLY_KEYS]);
  for (const pair of doc.contents.items as Pair[]) {
    const key = isScalar(pair.key) ? String(pair.key.value) : String(pair.key);
    const line = isScalar(pair.key) && pair.key.range ? lineCounter.linePos(pair.key.range[0]).line : 1;
    if (!known.has(key)) {
      return { ok: false, message: `${file}: line ${line}: unknown key "${key}" (expected one of ${[...known].sort().join(", ")})` };
    }
    const node = pair.value;
    // A number is read from its text, by the same parser as the flag: `1e1`, `0x2` or `2.0` is not a count.
    const asWritten = isScalar(node) && typeof node.value === "number" && typeof node.source === "string" ? node.source : undefined;
    const value = asWritten ?? (node && typeof node === "object" && "toJSON" in node ? (node as { toJSON(): unknown }).toJSON() : node);
    values.set(key, { value, line });
  }
  return { ok: true, defaults: { file, values } };
}
