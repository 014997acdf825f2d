// `ralph demo`: a complete loop with the built-in demo agent in a fresh temporary project.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defaultSettings } from "../../config/run-options.js";
import { generateRunId } from "../../store/run-paths.js";
import { ralphOnPath } from "../ralph-on-path.js";
import { startRun } from "../../launch/start-run.js";
import { runGit } from "../../worktree/run-git.js";
import { launchWords } from "../launch-words.js";

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

/** How a person runs this ralph from a shell: `ralph`, or through npx when that is how it was started. */
function ralphWord(env: NodeJS.ProcessEnv): string {
  if (ralphOnPath(env.PATH)) return "ralph";
  return env.npm_command === "exec" ? "npx ralph-loop-runner" : "ralph";
}

/**
 * Makes the demo project a git repository with its files committed, as a real project is: the run then
 * shows what stall detection sees. Without git the demo still runs (and says stall detection is off).
 */
async function commitDemoProject(projectDir: string): Promise<void> {
  const who = {
    GIT_AUTHOR_NAME: "ralph demo",
    GIT_AUTHOR_EMAIL: "demo@ralph.invalid",
    GIT_COMMITTER_NAME: "ralph demo",
    GIT_COMMITTER_EMAIL: "demo@ralph.invalid",
  };
  const env = { ...process.env, ...who };
  for (const args of [
    ["init", "-q"],
    ["add", "prd.json", "PROMPT.md"],
    ["commit", "-q", "--no-gpg-sign", "-m", "The demo project: three user stories"],
  ]) {
    if (!(await runGit(projectDir, args, env)).ok) return;
  }
}

/** Creates the demo project and runs the loop in it to DONE; the project is removed afterwards unless `keep`. */
export async function demoCommand(keep: boolean): Promise<number> {
  const projectDir = mkdtempSync(join(tmpdir(), "ralph-demo-"));
  writeFileSync(join(projectDir, "prd.json"), `${JSON.stringify(DEMO_PRD, null, 2)}\n`);
  writeFileSync(join(projectDir, "PROMPT.md"), DEMO_PROMPT);
  await commitDemoProject(projectDir);
  process.stdout.write(`ralph demo: a project with ${DEMO_PRD.userStories.length} user stories in ${projectDir}\n`);
  // The demo agent's pretend spend would read like money: the free demo reports none.
  process.env.RALPH_DEMO_FREE = "1";
  // This project is the demo's own: its agent may write its files here (never in a person's project).
  process.env.RALPH_DEMO_PROJECT = "1";
  const settings = {
    ...defaultSettings(),
    agent: "demo" as const,
    maxIterations: 10,
    completionPromise: "DONE",
    tasks: "prd.json",
    graceMs: 2000,
  };
  const ralph = ralphWord(process.env);
  try {
    return await startRun(
      {
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
        temporary: !keep,
        epilogue: () =>
          keep
            ? [
                `files the demo agent wrote: ${join(projectDir, "demo-output")}`,
                `inspect the run: cd ${projectDir} && ${ralph} status`,
              ]
            : [
                `the demo's temporary project is removed now; to look around in it afterwards: ${ralph} demo --keep`,
                `next: in your own project, ${ralph} init`,
              ],
      },
      launchWords,
    );
  } finally {
    if (!keep) rmSync(projectDir, { recursive: true, force: true });
  }
}
