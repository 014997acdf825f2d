// `ralph demo`: a complete loop with the built-in demo agent in a fresh temporary project.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defaultSettings } from "../../config/run-options.js";
import { generateRunId } from "../../store/run-paths.js";
import { startRun } from "../start-run.js";

const DEMO_PRD = {
  project: "greeter",
  userStories: [
    { id: "US-001", title: "Print a greeting", priority: 1, passes: false },
    { id: "US-002", title: "Greet by name", priority: 2, passes: false },
    { id: "US-003", title: "Say goodbye", priority: 3, passes: false },
  ],
};

const DEMO_PROMPT = `Implement the next user story of prd.json ({{task}}), then mark it as passing.
When every story passes, print <promise>DONE</promise>.
`;

/** Creates the demo project and runs the loop in it to DONE. */
export async function demoCommand(): Promise<number> {
  const projectDir = mkdtempSync(join(tmpdir(), "ralph-demo-"));
  writeFileSync(join(projectDir, "prd.json"), `${JSON.stringify(DEMO_PRD, null, 2)}\n`);
  writeFileSync(join(projectDir, "PROMPT.md"), DEMO_PROMPT);
  process.stdout.write(`ralph demo: a project with ${DEMO_PRD.userStories.length} user stories in ${projectDir}\n`);
  const settings = { ...defaultSettings(), agent: "demo" as const, maxIterations: 10, completionPromise: "DONE", tasks: "prd.json", graceMs: 2000 };
  return startRun({
    projectDir,
    runId: generateRunId(new Date()),
    settings,
    plan: {
      active: true,
      maxIterations: settings.maxIterations,
      completionPromise: "DONE",
      completionCriteria: [{ type: "tasks_done", check: "prd.json" }],
      tasks: "prd.json",
      prompt: Buffer.from(DEMO_PROMPT),
    },
    previous: null,
    projectLock: true,
    epilogue: () => [`files the demo agent wrote: ${join(projectDir, "demo-output")}`, `inspect the run: cd ${projectDir} && node ${process.argv[1] ?? "ralph"} status`],
  });
}
