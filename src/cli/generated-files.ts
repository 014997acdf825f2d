// Every file written from the declarations: the JSON Schemas under schemas/ and the pages of docs/reference/,
// by path from the project root. scripts/write-schemas.mjs writes them; a test fails when one on disk differs.
import { z } from "zod";
import { runListSchema, runStatusReportSchema } from "../store/run-summary.js";
import { runEventSchema } from "../notify/event-schema.js";
import { runReportSchema } from "../report/report-schema.js";
import { buildProgram } from "./program.js";
import { DECLARED, ralphYamlSchema, referencePages, type Declarations } from "./reference.js";
import type { JsonSchema } from "../config/option-types.js";

const json = (value: unknown): string => `${JSON.stringify(value, null, 2)}\n`;

/** The generated files' contents by path, from `declared` (the declarations in force unless a test changes one). */
export async function generatedFiles(declared: Declarations = DECLARED): Promise<Record<string, string>> {
  const event = z.toJSONSchema(runEventSchema) as JsonSchema;
  const report = z.toJSONSchema(runReportSchema) as JsonSchema;
  const hook = await import("./commands/hook.js");
  const program = buildProgram(null, () => undefined, hook, declared.options);
  const files: Record<string, string> = {
    "schemas/list.schema.json": json(z.toJSONSchema(runListSchema)),
    "schemas/status.schema.json": json(z.toJSONSchema(runStatusReportSchema)),
    "schemas/event.schema.json": json(event),
    "schemas/report.schema.json": json(report),
    "schemas/ralph-yaml.schema.json": json(ralphYamlSchema(declared)),
  };
  for (const [name, text] of Object.entries(referencePages(program, { event, report }, declared)))
    files[`docs/reference/${name}`] = text;
  return files;
}
