// state.md: the run's desired state, owned by the user; written once, re-read at every boundary.
import { writeFileAtomic } from "./atomic-write.js";
import { parseFrontMatter, renderFrontMatter } from "./front-matter.js";
import { readRegular, RunFileError } from "./regular-file.js";

/** A completion criterion as written in state.md or ralph.yaml. */
export interface CriterionSpec {
  type: string;
  check: string;
}

/** The fields of state.md and its prompt. */
export interface RunState {
  active: boolean;
  maxIterations: number;
  completionPromise: string | null;
  completionCriteria: CriterionSpec[];
  tasks: string | null;
  /** The prompt exactly as given: bytes, so that a prompt in any encoding reaches the agent unchanged. */
  prompt: Buffer;
}

/** state.md's bytes for `state`: the front matter, then the prompt's bytes as they are. */
export function renderState(state: RunState): Buffer {
  const fields = {
    active: state.active,
    max_iterations: state.maxIterations,
    completion_promise: state.completionPromise,
    completion_criteria: state.completionCriteria,
    tasks: state.tasks,
  };
  return Buffer.concat([Buffer.from(renderFrontMatter({ fields, body: "" })), state.prompt]);
}

/** Writes a new state.md (at the start of a run, by `ralph continue`, or by `ralph set` through the runner). */
export function writeStateFile(file: string, state: RunState): void {
  writeFileAtomic(file, renderState(state));
}

/** The raw bytes of state.md, or a message when it is missing, unreadable or not a regular file. */
export function readStateBytes(file: string): { ok: true; bytes: Buffer } | { ok: false; message: string } {
  try {
    return { ok: true, bytes: readRegular(file, 16 * 1024 * 1024) };
  } catch (error) {
    if (error instanceof RunFileError) return { ok: false, message: error.message };
    return { ok: false, message: `${file}: cannot be read (${(error as NodeJS.ErrnoException).code ?? "error"})` };
  }
}

/** Parses state.md; the body (the prompt) is kept as the file's own bytes. */
export function parseState(file: string, bytes: Buffer): { ok: true; state: RunState } | { ok: false; message: string } {
  const text = bytes.toString("utf8");
  const parsed = parseFrontMatter(text);
  if (!parsed.ok) return { ok: false, message: `${file} ${parsed.message}` };
  // The front matter is text; if it decoded without loss its byte length says where the body starts.
  const head = Buffer.from(text.slice(0, text.length - parsed.doc.body.length));
  const exact = bytes.subarray(0, head.length).equals(head);
  return stateFromFields(file, parsed.doc.fields, exact ? bytes.subarray(head.length) : Buffer.from(parsed.doc.body));
}

/** Reads state.md; a file the user broke gives a message instead of a state. */
export function readStateFile(file: string): { ok: true; state: RunState } | { ok: false; message: string } {
  const read = readStateBytes(file);
  return read.ok ? parseState(file, read.bytes) : read;
}

function stateFromFields(
  file: string,
  fields: Record<string, unknown>,
  prompt: Buffer,
): { ok: true; state: RunState } | { ok: false; message: string } {
  const fail = (field: string, expected: string) => ({
    ok: false as const,
    message: `${file}: ${field}: expected ${expected}, got ${JSON.stringify(fields[field])}`,
  });
  const active = fields.active ?? true;
  if (typeof active !== "boolean") return fail("active", "true or false");
  const max = fields.max_iterations ?? 3;
  const maxIterations = typeof max === "string" && /^[0-9]+$/.test(max) ? Number.parseInt(max, 10) : max;
  if (typeof maxIterations !== "number" || !Number.isSafeInteger(maxIterations) || maxIterations < 0) {
    return fail("max_iterations", "a whole number (0 = unlimited)");
  }
  const promise = fields.completion_promise ?? null;
  if (promise !== null && typeof promise !== "string") return fail("completion_promise", "a text or null");
  const criteria = fields.completion_criteria ?? [];
  if (!isCriteriaList(criteria)) return fail("completion_criteria", "a list of {type, check}");
  const tasks = fields.tasks ?? null;
  if (tasks !== null && typeof tasks !== "string") return fail("tasks", "a file path or null");
  return {
    ok: true,
    state: {
      active,
      maxIterations,
      completionPromise: promise === "" ? null : promise,
      completionCriteria: criteria.map((c) => ({ type: c.type, check: c.check })),
      tasks,
      prompt,
    },
  };
}

/** Whether a value is a list of `{type, check}` with string fields. */
export function isCriteriaList(value: unknown): value is CriterionSpec[] {
  return (
    Array.isArray(value) &&
    value.every(
      (item) =>
        item !== null &&
        typeof item === "object" &&
        typeof (item as CriterionSpec).type === "string" &&
        typeof (item as CriterionSpec).check === "string",
    )
  );
}
