// state.md: the run's plan, owned by the user; written once, re-read at every iteration boundary.
import { readFileSync } from "node:fs";
import { writeFileAtomic } from "./atomic-write.js";
import { parseFrontMatter, renderFrontMatter } from "./front-matter.js";
import { planRules, type PlanRules } from "./plan-fields.js";

/** The fields of state.md and its prompt. */
export interface Plan extends PlanRules {
  active: boolean;
  tasks: string | null;
  prompt: string;
}

/** A state.md read: the plan, or what is wrong with the file. */
export type PlanRead = { ok: true; plan: Plan } | { ok: false; message: string };

/** Writes a new state.md (only at the start of a run, or by `ralph continue`). */
export function writePlanFile(file: string, plan: Plan): void {
  const fields = {
    active: plan.active,
    max_iterations: plan.maxIterations,
    completion_promise: plan.completionPromise,
    completion_criteria: plan.completionCriteria,
    tasks: plan.tasks,
  };
  writeFileAtomic(file, renderFrontMatter({ fields, body: plan.prompt }));
}

/** Reads state.md; a file the user broke gives a message instead of a plan. */
export function readPlanFile(file: string): PlanRead {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    return { ok: false, message: `${file}: cannot be read (${(error as NodeJS.ErrnoException).code ?? "error"})` };
  }
  const parsed = parseFrontMatter(text);
  if (!parsed.ok) return { ok: false, message: `${file} ${parsed.message}` };
  const { fields, body } = parsed.doc;
  const active = fields.active ?? true;
  if (typeof active !== "boolean") return { ok: false, message: `${file}: active: expected true or false, got ${JSON.stringify(active)}` };
  const tasks = fields.tasks ?? null;
  if (tasks !== null && typeof tasks !== "string") return { ok: false, message: `${file}: tasks: expected a file path or null, got ${JSON.stringify(tasks)}` };
  const rules = planRules(file, fields);
  if (!rules.ok) return rules;
  return { ok: true, plan: { active, ...rules.rules, tasks, prompt: body } };
}
