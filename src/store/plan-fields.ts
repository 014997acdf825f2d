// The fields state.md and the in-session loop's file share: the cap, the promise and the completion criteria.
import { closestWord, parseCount } from "../util/parse-value.js";
import { parseReviewFields, reviewFields, type ReviewSpec } from "./review-fields.js";

/** The criterion types ralph checks itself; any other type is a label for a `command` check. */
export const CRITERION_TYPES = ["command", "file_exists", "no_files", "tasks_done", "review"] as const;

/** The first words of the built-in types' families: a type starting so is a misspelling, not a label. */
const FAMILY_PREFIXES = ["file_", "files_", "no_", "task_", "tasks_", "review_"];

/**
 * Why `type` is refused: a near miss of a built-in type (`file_exist`) or an unknown member of one of their
 * families (`file_missing`), which would otherwise run its `check` as a shell command. Null for a label.
 */
function misspeltType(type: string): string | null {
  if ((CRITERION_TYPES as readonly string[]).includes(type)) return null;
  const near = closestWord(type, CRITERION_TYPES);
  const lower = type.toLowerCase();
  if (near === null && !FAMILY_PREFIXES.some((prefix) => lower.startsWith(prefix))) return null;
  const hint = near === null ? "" : `did you mean ${near}? `;
  return `type ${JSON.stringify(type)} is not a criterion type (${hint}built in: ${CRITERION_TYPES.join(", ")}; any other name is a label for a shell command)`;
}

/** One completion criterion; an unknown `type` is a label for a `command` check. */
export interface Criterion {
  type: string;
  /** The command, path or glob; for a review, a label naming the reviewer. */
  check: string;
  /** Set on `type: review`: how the reviewer runs. */
  review?: ReviewSpec;
  /** Where the check runs and its paths are read from, relative to the work tree's root (a `--check` typed in a subdirectory). */
  dir?: string;
}

/** A criterion as state.md writes it: `{type, check}`, and a review's own keys. */
export function criterionFields(criterion: Criterion): Record<string, unknown> {
  if (criterion.review) return reviewFields(criterion.review, criterion.check);
  return criterion.dir === undefined
    ? { type: criterion.type, check: criterion.check }
    : { type: criterion.type, check: criterion.check, dir: criterion.dir };
}

/** The completion rules and cap of a loop, as both files hold them. */
/**
 * The iteration cap of a run that names none: `ralph run -n`'s default (config/run-options.ts declares the
 * option with it), and what a state.md or loop file without `max_iterations:` means.
 */
export const DEFAULT_MAX_ITERATIONS = 3;

export interface PlanRules {
  /** 0 = unlimited. */
  maxIterations: number;
  completionPromise: string | null;
  completionCriteria: Criterion[];
}

/** Reads the shared fields from a parsed front matter; a bad one gives a message naming the file and field. */
export function planRules(
  file: string,
  fields: Record<string, unknown>,
): { ok: true; rules: PlanRules } | { ok: false; message: string } {
  const fail = (field: string, expected: string) => ({
    ok: false as const,
    message: `${file}: ${field}: expected ${expected}, got ${JSON.stringify(fields[field]) ?? "nothing"}`,
  });
  const maxIterations = wholeNumber(fields.max_iterations ?? DEFAULT_MAX_ITERATIONS);
  if (maxIterations === null) return fail("max_iterations", "a whole number (0 = unlimited)");
  const promise = fields.completion_promise ?? null;
  if (promise !== null && typeof promise !== "string") return fail("completion_promise", "a text or null");
  const criteria = parseCriteria(fields.completion_criteria ?? null, file);
  if (!criteria.ok) return criteria;
  return {
    ok: true,
    rules: {
      maxIterations,
      completionPromise: promise === null || promise.trim() === "" ? null : promise,
      completionCriteria: criteria.criteria,
    },
  };
}

/** A whole number of 0 or more, also when written as a string of digits; null otherwise. */
export function wholeNumber(value: unknown): number | null {
  const parsed = parseCount(value);
  return parsed.ok ? parsed.value : null;
}

/** Validates a list of `{type, check}` read from `source` (state.md, ralph.yaml); a plain string is a command. */
export function parseCriteria(
  value: unknown,
  source: string,
): { ok: true; criteria: Criterion[] } | { ok: false; message: string } {
  if (value === undefined || value === null) return { ok: true, criteria: [] };
  if (!Array.isArray(value))
    return { ok: false, message: `${source}: completion criteria must be a list of {type, check}` };
  const criteria: Criterion[] = [];
  for (const [index, entry] of value.entries()) {
    const where = `${source}: completion criterion ${index + 1}`;
    if (typeof entry === "string") {
      if (entry.trim() === "") return { ok: false, message: `${where} is an empty command` };
      criteria.push({ type: "command", check: entry });
      continue;
    }
    if (typeof entry !== "object" || entry === null || Array.isArray(entry)) {
      return { ok: false, message: `${where} must be {type, check}` };
    }
    const { type: rawType = "command", check, dir } = entry as Record<string, unknown>;
    if (typeof rawType !== "string" || rawType.trim() === "")
      return { ok: false, message: `${where} needs a "type" string` };
    const type = rawType.trim();
    const misspelt = misspeltType(type);
    if (misspelt !== null) return { ok: false, message: `${where}: ${misspelt}` };
    if (type === "review") {
      const review = parseReviewFields(entry as Record<string, unknown>, where);
      if (!review.ok) return review;
      criteria.push({ type, check: review.label, review: review.review });
      continue;
    }
    if (dir !== undefined && !isInsideDir(dir)) {
      return {
        ok: false,
        message: `${where}: dir: expected a directory inside the project, relative to its root (e.g. packages/api), got ${JSON.stringify(dir)}`,
      };
    }
    const at = dir === undefined ? {} : { dir };
    // tasks_done may leave its check empty: it then means the run's own task list.
    if (type === "tasks_done" && (check === undefined || check === null)) {
      criteria.push({ type, check: "", ...at });
      continue;
    }
    if (typeof check !== "string" || (type !== "tasks_done" && check.trim() === "")) {
      return { ok: false, message: `${where} (${type}) needs a "check" string` };
    }
    criteria.push({ type, check, ...at });
  }
  return { ok: true, criteria };
}

/** A relative path that stays inside the directory it is read from (no `..`, not absolute). */
function isInsideDir(dir: unknown): dir is string {
  if (typeof dir !== "string" || dir.trim() === "" || dir.startsWith("/")) return false;
  return !dir.split(/[\\/]/).includes("..");
}
