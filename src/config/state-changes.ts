// `ralph set RUN key=value...`: which fields of state.md a person may change. Each key but `active` is a
// `ralph run` option's ralph.yaml key, read with that option's declared parser (config/run-options.ts).
import type { Plan } from "../store/plan-file.js";
import { closestWord, parseBoolean } from "../util/parse-value.js";
import { runOption, type OptionSpec, type RunSettings } from "./run-options.js";

/** Validated changes to a run's desired state. */
export type StateChanges = Partial<
  Pick<Plan, "active" | "maxIterations" | "completionPromise" | "completionCriteria" | "tasks">
>;

type Change = { ok: true; apply: (changes: StateChanges) => void } | { ok: false; expected: string };

/** A run option `ralph set` changes: its declaration, and how a read value lands in the changes. */
interface SettableOption {
  option: keyof RunSettings;
  /** An empty value: what it means (null: refused like any bad value). */
  empty: ((changes: StateChanges) => void) | null;
  apply: (changes: StateChanges, value: never) => void;
}

/** The run options `ralph set` changes, by their declarations. */
const SETTABLE: readonly SettableOption[] = [
  { option: "maxIterations", empty: null, apply: (changes, value: number) => (changes.maxIterations = value) },
  {
    option: "completionPromise",
    empty: (changes) => (changes.completionPromise = null),
    apply: (changes, value: string | null) => (changes.completionPromise = value),
  },
  // Each check=CMD adds one command criterion; together they replace the checks (`check=` alone removes them all).
  {
    option: "checks",
    empty: (changes) => (changes.completionCriteria ??= []),
    apply: (changes, value: string[]) =>
      (changes.completionCriteria = [
        ...(changes.completionCriteria ?? []),
        ...value.map((check) => ({ type: "command", check })),
      ]),
  },
  {
    option: "tasks",
    empty: (changes) => (changes.tasks = null),
    apply: (changes, value: string | null) => (changes.tasks = value),
  },
];

/** `key=VALUE` read by the option's own parser. */
function readOption(settable: SettableOption, value: string): Change {
  if (value === "" && settable.empty) return { ok: true, apply: settable.empty };
  const spec = runOption(settable.option) as OptionSpec;
  const parsed = spec.parse(value);
  if (!parsed.ok)
    return {
      ok: false,
      expected: `${spec.yaml ?? spec.key}=${(/<([^>]+)>/.exec(spec.flags)?.[1] ?? "value").toUpperCase()}, ${parsed.expected}`,
    };
  return { ok: true, apply: (changes) => settable.apply(changes, parsed.value as never) };
}

/** `active=true|false`: whether the run goes on (state.md's own field, no option of `ralph run`). */
function readActive(value: string): Change {
  const parsed = parseBoolean(value);
  if (!parsed.ok || value.trim() === "") return { ok: false, expected: "active=true or active=false" };
  return { ok: true, apply: (changes) => (changes.active = parsed.value) };
}

const byKey = new Map<string, (value: string) => Change>([
  ["active", readActive],
  ...SETTABLE.map((settable): [string, (value: string) => Change] => [
    runOption(settable.option).yaml ?? settable.option,
    (value) => readOption(settable, value),
  ]),
]);

/** The keys `ralph set` accepts. */
export const SET_KEYS: readonly string[] = [...byKey.keys()];

/**
 * Reads `key=value` words. `check` may repeat and replaces the completion criteria with those commands
 * (`check=` alone removes them all); an empty `completion_promise=` or `tasks=` removes it.
 */
export function parseStateChanges(
  words: readonly string[],
): { ok: true; changes: StateChanges } | { ok: false; message: string } {
  const changes: StateChanges = {};
  if (words.length === 0)
    return { ok: false, message: `nothing to set: give key=value (keys: ${SET_KEYS.join(", ")})` };
  for (const word of words) {
    const at = word.indexOf("=");
    if (at === -1) return { ok: false, message: `${word}: expected key=value` };
    const key = word.slice(0, at);
    const read = byKey.get(key);
    if (!read) {
      const near = closestWord(key.replace(/-/g, "_"), SET_KEYS);
      return {
        ok: false,
        message:
          near === null
            ? `${word}: expected one of the keys ${SET_KEYS.join(", ")}`
            : `${word}: unknown key ${key} (did you mean ${near}?)`,
      };
    }
    const change = read(word.slice(at + 1));
    if (!change.ok) return { ok: false, message: `${word}: expected ${change.expected}` };
    change.apply(changes);
  }
  return { ok: true, changes };
}

/** `state` with `changes` applied; `check=` replaces the checks, and the reviews (set in ralph.yaml) stay. */
export function applyStateChanges(state: Plan, changes: StateChanges): Plan {
  if (changes.completionCriteria === undefined) return { ...state, ...changes };
  const reviews = state.completionCriteria.filter((criterion) => criterion.type === "review");
  return { ...state, ...changes, completionCriteria: [...changes.completionCriteria, ...reviews] };
}

/** The changes as `key=value` text for logs (the checks as the list they now are). */
export function describeStateChanges(changes: StateChanges): string {
  const key = (option: keyof RunSettings): string => runOption(option).yaml ?? option;
  const parts: string[] = [];
  if (changes.active !== undefined) parts.push(`active=${changes.active}`);
  if (changes.maxIterations !== undefined) parts.push(`${key("maxIterations")}=${changes.maxIterations}`);
  if (changes.completionPromise !== undefined)
    parts.push(`${key("completionPromise")}=${changes.completionPromise ?? ""}`);
  if (changes.completionCriteria !== undefined)
    parts.push(`checks=${JSON.stringify(changes.completionCriteria.map((c) => c.check))}`);
  if (changes.tasks !== undefined) parts.push(`${key("tasks")}=${changes.tasks ?? ""}`);
  return parts.join(" ");
}
