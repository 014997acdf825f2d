// Writes the JSON Schemas of `ralph list --json` and `ralph status --json` from their zod definitions.
import { writeFileSync } from "node:fs";
import { z } from "zod";
import { runListSchema, runStatusReportSchema } from "../dist/src/store/run-summary.js";

for (const [name, schema] of [
  ["list", runListSchema],
  ["status", runStatusReportSchema],
]) {
  writeFileSync(`schemas/${name}.schema.json`, `${JSON.stringify(z.toJSONSchema(schema), null, 2)}\n`);
}
