// `.claude/ralph-loop.local.md`: the in-session loop's state as YAML front matter, with the prompt as the body.
import { existsSync, readFileSync } from "node:fs";
import { writeFileAtomic } from "../store/atomic-write.js";
import { trustLoopFile } from "./loop-trust.js";
import { parseFrontMatter, renderFrontMatter } from "../store/front-matter.js";
import { criterionFields, planRules, wholeNumber, type PlanRules } from "../store/plan-fields.js";

/** The loop's state; the user may edit the file at any time (e.g. `active: false`, a higher `max_iterations`). */
export interface HookLoop extends PlanRules {
  active: boolean;
  /** The iteration in progress; it has ended when the session next stops. */
  iteration: number;
  /** The session the loop belongs to; "" until the first session reaches the hook. */
  sessionId: string;
  startedAt: string | null;
  /** The run directory under .ralph/runs recording this loop; null in a hand-written file. */
  runId: string | null;
  prompt: string;
}

/** What is on disk. */
export type HookLoopRead =
  { kind: "missing" } | { kind: "corrupt"; message: string; runId: string | null } | { kind: "ok"; loop: HookLoop };

/** Fields the hook and `ralph hook cancel` change; everything else in the file is left as the user wrote it. */
export interface HookLoopPatch {
  active?: boolean;
  iteration?: number;
  session_id?: string;
  run_id?: string;
}

const RUN_ID = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}$/;

/** Reads the state file; a file that cannot be understood is `corrupt`, with its run id when one can be found. */
export function readHookLoop(file: string): HookLoopRead {
  if (!existsSync(file)) return { kind: "missing" };
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    return {
      kind: "corrupt",
      message: `${file} cannot be read (${(error as NodeJS.ErrnoException).code ?? "error"})`,
      runId: null,
    };
  }
  return parseHookLoop(file, text);
}

/** The text of state file `file` (named in messages) as a loop, or `corrupt`. */
export function parseHookLoop(file: string, text: string): HookLoopRead {
  const parsed = parseFrontMatter(text);
  if (!parsed.ok) return { kind: "corrupt", message: `${file} ${parsed.message}`, runId: scrapeRunId(text) };
  const result = loopFromFields(file, parsed.doc.fields, parsed.doc.body);
  return result.ok
    ? { kind: "ok", loop: result.loop }
    : { kind: "corrupt", message: result.message, runId: scrapeRunId(text) };
}

function loopFromFields(
  file: string,
  fields: Record<string, unknown>,
  prompt: string,
): { ok: true; loop: HookLoop } | { ok: false; message: string } {
  const fail = (field: string, expected: string) => ({
    ok: false as const,
    message: `${file}: ${field}: expected ${expected}, got ${JSON.stringify(fields[field]) ?? "nothing"}`,
  });
  const iteration = wholeNumber(fields.iteration ?? 1);
  if (iteration === null || iteration < 1) return fail("iteration", "a whole number of 1 or more");
  const sessionId = fields.session_id ?? "";
  if (typeof sessionId !== "string") return fail("session_id", "a text (empty until a session is bound)");
  const rules = planRules(file, fields);
  if (!rules.ok) return rules;
  const startedAt = fields.started_at ?? null;
  if (startedAt !== null && typeof startedAt !== "string") return fail("started_at", "a time");
  const runId = fields.run_id ?? null;
  if (runId !== null && (typeof runId !== "string" || !RUN_ID.test(runId))) return fail("run_id", "a run id");
  return {
    ok: true,
    loop: {
      active: fields.active === true,
      iteration,
      sessionId: sessionId.trim(),
      ...rules.rules,
      startedAt,
      runId,
      prompt,
    },
  };
}

function scrapeRunId(text: string): string | null {
  const match = /^run_id:[ \t]*["']?([A-Za-z0-9_-][A-Za-z0-9._-]*)["']?[ \t]*$/m.exec(text);
  return match?.[1] ?? null;
}

/** The file's text for a new loop. */
export function renderHookLoop(state: HookLoop): string {
  const fields = {
    active: state.active,
    iteration: state.iteration,
    session_id: state.sessionId,
    max_iterations: state.maxIterations,
    completion_promise: state.completionPromise,
    completion_criteria: state.completionCriteria.map(criterionFields),
    started_at: state.startedAt,
    run_id: state.runId,
  };
  return renderFrontMatter({ fields, body: state.prompt });
}

/** Writes a whole new state file (only `ralph hook start` does this). */
export function writeHookLoop(file: string, state: HookLoop): void {
  const text = renderHookLoop(state);
  writeFileAtomic(file, text);
  trustLoopFile(file, text);
}

/**
 * Changes only the given fields, line by line, so the user's comments, order and other edits survive.
 * Works on a corrupt file too, as long as it has front matter (to set `active: false` in it). Returns false
 * when there was nothing to change it in.
 */
export function patchHookLoop(file: string, patch: HookLoopPatch): boolean {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch {
    return false;
  }
  const patched = patchText(text, patch);
  if (patched === null) return false;
  writeFileAtomic(file, patched);
  trustLoopFile(file, patched);
  return true;
}

function patchText(text: string, patch: HookLoopPatch): string | null {
  const opening = /^---\r?\n/.exec(text);
  if (!opening) return null;
  const closing = /^---[ \t]*\r?$/m.exec(text.slice(opening[0].length));
  if (!closing) return null;
  const start = opening[0].length;
  const end = start + closing.index;
  let yaml = text.slice(start, end);
  for (const [key, value] of Object.entries(patch) as Array<[string, string | number | boolean | undefined]>) {
    if (value === undefined) continue;
    const line = `${key}: ${typeof value === "string" ? JSON.stringify(value) : String(value)}`;
    const existing = new RegExp(`^${key}:.*$`, "m");
    yaml = existing.test(yaml)
      ? yaml.replace(existing, line)
      : `${yaml}${yaml === "" || yaml.endsWith("\n") ? "" : "\n"}${line}\n`;
  }
  const result = text.slice(0, start) + yaml + text.slice(end);
  // A value the line edit could not replace cleanly (e.g. a multi-line YAML value) falls back to re-rendering.
  const check = parseFrontMatter(result);
  if (!check.ok) {
    const original = parseFrontMatter(text);
    if (!original.ok) return result;
    return renderFrontMatter({ fields: { ...original.doc.fields, ...definedOnly(patch) }, body: original.doc.body });
  }
  const fields = check.doc.fields;
  const agrees = Object.entries(definedOnly(patch)).every(([key, value]) => fields[key] === value);
  return agrees ? result : renderFrontMatter({ fields: { ...fields, ...definedOnly(patch) }, body: check.doc.body });
}

function definedOnly(patch: HookLoopPatch): Record<string, unknown> {
  return Object.fromEntries(Object.entries(patch).filter(([, value]) => value !== undefined));
}
