// state.md: the run's plan, owned by the user; written once, re-read at every iteration boundary.
import { writeFileAtomic } from "./atomic-write.js";
import { parseFrontMatter, renderFrontMatter } from "./front-matter.js";
import { criterionFields, planRules, type PlanRules } from "./plan-fields.js";
import { readRegular, RunFileError } from "./regular-file.js";

/** The fields of state.md and its prompt. */
export interface Plan extends PlanRules {
  active: boolean;
  tasks: string | null;
  /** The prompt exactly as given: bytes, so that a prompt in any encoding reaches the agent unchanged. */
  prompt: Buffer;
}

/** A state.md read: the plan, or what is wrong with the file. */
export type PlanRead = { ok: true; plan: Plan } | { ok: false; message: string };

/** state.md's bytes for `plan`: the front matter, then the prompt's bytes as they are. */
export function renderPlan(plan: Plan): Buffer {
  const fields = {
    active: plan.active,
    max_iterations: plan.maxIterations,
    completion_promise: plan.completionPromise,
    completion_criteria: plan.completionCriteria.map(criterionFields),
    tasks: plan.tasks,
  };
  return Buffer.concat([Buffer.from(renderFrontMatter({ fields, body: "" })), plan.prompt]);
}

/** Writes a new state.md (at the start of a run, by `ralph continue`, or by `ralph set` through the runner). */
export function writePlanFile(file: string, plan: Plan): void {
  writeFileAtomic(file, renderPlan(plan));
}

/** The raw bytes of state.md, or a message when it is missing, unreadable or not a regular file. */
export function readPlanBytes(file: string): { ok: true; bytes: Buffer } | { ok: false; message: string } {
  try {
    return { ok: true, bytes: readRegular(file, 16 * 1024 * 1024) };
  } catch (error) {
    if (error instanceof RunFileError) return { ok: false, message: error.message };
    return { ok: false, message: `${file}: cannot be read (${(error as NodeJS.ErrnoException).code ?? "error"})` };
  }
}

/** Parses state.md; the body (the prompt) is kept as the file's own bytes. */
export function parsePlan(file: string, bytes: Buffer): PlanRead {
  const text = bytes.toString("utf8");
  const parsed = parseFrontMatter(text);
  if (!parsed.ok) return { ok: false, message: `${file} ${parsed.message}` };
  // The front matter is text; if it decoded without loss its byte length says where the body starts.
  const head = Buffer.from(text.slice(0, text.length - parsed.doc.body.length));
  const exact = bytes.subarray(0, head.length).equals(head);
  const { fields } = parsed.doc;
  const active = fields.active ?? true;
  if (typeof active !== "boolean")
    return { ok: false, message: `${file}: active: expected true or false, got ${JSON.stringify(active)}` };
  const tasks = fields.tasks ?? null;
  if (tasks !== null && typeof tasks !== "string")
    return { ok: false, message: `${file}: tasks: expected a file path or null, got ${JSON.stringify(tasks)}` };
  const rules = planRules(file, fields);
  if (!rules.ok) return rules;
  return {
    ok: true,
    plan: { active, ...rules.rules, tasks, prompt: exact ? bytes.subarray(head.length) : Buffer.from(parsed.doc.body) },
  };
}

/** Reads state.md; a file the user broke gives a message instead of a plan. */
export function readPlanFile(file: string): PlanRead {
  const read = readPlanBytes(file);
  return read.ok ? parsePlan(file, read.bytes) : read;
}
