// `ralph set RUN key=value...`: which fields of state.md a person may change, read with the flags' parsers.
import type { Plan } from "../store/plan-file.js";
import { closestWord, parseBoolean, parseCount } from "../util/parse-value.js";

/** Validated changes to a run's desired state. */
export type StateChanges = Partial<Pick<Plan, "active" | "maxIterations" | "completionPromise" | "completionCriteria" | "tasks">>;

/** The keys `ralph set` accepts. */
export const SET_KEYS = ["active", "max_iterations", "completion_promise", "check", "tasks"] as const;

/**
 * Reads `key=value` words. `check` may repeat and replaces the completion criteria with those commands
 * (`check=` alone removes them all); an empty `completion_promise=` or `tasks=` removes it.
 */
export function parseStateChanges(words: readonly string[]): { ok: true; changes: StateChanges } | { ok: false; message: string } {
  const changes: StateChanges = {};
  const bad = (word: string, expected: string) => ({ ok: false as const, message: `${word}: expected ${expected}` });
  if (words.length === 0) return { ok: false, message: `nothing to set: give key=value (keys: ${SET_KEYS.join(", ")})` };
  for (const word of words) {
    const at = word.indexOf("=");
    const key = at === -1 ? word : word.slice(0, at);
    const value = word.slice(at + 1);
    if (at === -1) return bad(word, "key=value");
    switch (key) {
      case "active": {
        const parsed = parseBoolean(value);
        if (!parsed.ok || value.trim() === "") return bad(word, "active=true or active=false");
        changes.active = parsed.value;
        break;
      }
      case "max_iterations": {
        const parsed = parseCount(value);
        if (!parsed.ok) return bad(word, `max_iterations=N, ${parsed.expected}`);
        changes.maxIterations = parsed.value;
        break;
      }
      case "completion_promise":
        changes.completionPromise = value === "" ? null : value;
        break;
      case "check":
        changes.completionCriteria = [...(changes.completionCriteria ?? []), ...(value === "" ? [] : [{ type: "command", check: value }])];
        break;
      case "tasks":
        changes.tasks = value === "" ? null : value;
        break;
      default: {
        const near = closestWord(key.replace(/-/g, "_"), SET_KEYS);
        return { ok: false, message: near === null ? `${word}: expected one of the keys ${SET_KEYS.join(", ")}` : `${word}: unknown key ${key} (did you mean ${near}?)` };
      }
    }
  }
  return { ok: true, changes };
}

/** `state` with `changes` applied; `check=` replaces the checks, and the reviews (set in ralph.yaml) stay. */
export function applyStateChanges(state: Plan, changes: StateChanges): Plan {
  if (changes.completionCriteria === undefined) return { ...state, ...changes };
  const reviews = state.completionCriteria.filter((criterion) => criterion.type === "review");
  return { ...state, ...changes, completionCriteria: [...changes.completionCriteria, ...reviews] };
}

/** The changes as `key=value` text for logs. */
export function describeStateChanges(changes: StateChanges): string {
  const parts: string[] = [];
  if (changes.active !== undefined) parts.push(`active=${changes.active}`);
  if (changes.maxIterations !== undefined) parts.push(`max_iterations=${changes.maxIterations}`);
  if (changes.completionPromise !== undefined) parts.push(`completion_promise=${changes.completionPromise ?? ""}`);
  if (changes.completionCriteria !== undefined) parts.push(`checks=${JSON.stringify(changes.completionCriteria.map((c) => c.check))}`);
  if (changes.tasks !== undefined) parts.push(`tasks=${changes.tasks ?? ""}`);
  return parts.join(" ");
}
