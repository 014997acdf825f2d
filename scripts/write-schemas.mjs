// Writes the JSON Schemas of `ralph list --json`, `ralph status --json` and the event payload from their zod definitions.
import { writeFileSync } from "node:fs";
import { z } from "zod";
import { runListSchema, runStatusReportSchema } from "../dist/src/store/run-summary.js";
import { runEventSchema } from "../dist/src/notify/event-schema.js";
import { runReportSchema } from "../dist/src/report/report-schema.js";

for (const [name, schema] of [
  ["list", runListSchema],
  ["status", runStatusReportSchema],
  ["event", runEventSchema],
  ["report", runReportSchema],
]) {
  writeFileSync(`schemas/${name}.schema.json`, `${JSON.stringify(z.toJSONSchema(schema), null, 2)}\n`);
}
