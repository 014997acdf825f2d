// `ralph report RUN [--format md|json]`: what a reviewer needs, on stdout and in $GITHUB_STEP_SUMMARY when set.
import { appendFileSync } from "node:fs";
import { readReport } from "../../report/read-report.js";
import { pickRun } from "../pick-run.js";
import { renderReportMarkdown } from "../render-report.js";
import { UsageError } from "../usage-error.js";

/** Prints the report of RUN (the latest run when not given); exit 0, 2 for a bad format or an unknown run. */
export async function reportCommand(
  projectDir: string,
  given: string | undefined,
  format: string | undefined,
  env: NodeJS.ProcessEnv,
): Promise<number> {
  const chosen = format ?? "md";
  if (chosen !== "md" && chosen !== "json")
    throw new UsageError(`--format: expected md or json, got ${JSON.stringify(chosen)}`);
  const id = pickRun(projectDir, given, "report on", true);
  const report = await readReport(projectDir, id);
  if (!report) throw new UsageError(`run ${id} has no readable status.json; there is nothing to report`);
  const markdown = renderReportMarkdown(report);
  process.stdout.write(chosen === "json" ? `${JSON.stringify(report, null, 2)}\n` : markdown);
  const summary = env.GITHUB_STEP_SUMMARY;
  if (summary) {
    try {
      appendFileSync(summary, markdown);
    } catch (error) {
      process.stderr.write(
        `ralph: GITHUB_STEP_SUMMARY ${summary}: cannot be written (${(error as NodeJS.ErrnoException).code ?? "error"})\n`,
      );
    }
  }
  return 0;
}
