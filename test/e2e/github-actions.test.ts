// deploy/github-actions without GitHub: the workflow through GitHub's own parser (@actions/workflow-parser),
// the composite actions through its action schema, the workflow's references checked against the actions'
// inputs and outputs, and the actions' steps run here with GITHUB_OUTPUT and GITHUB_STEP_SUMMARY files.
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { register } from "node:module";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parse } from "yaml";
import { RALPH, cleanEnv } from "../helpers/cli.js";
import { git, isolateGitConfig, tempRepo } from "../helpers/git-repo.js";
import { runCompositeAction } from "../helpers/composite-action.js";

// The parser imports its JSON schemas the way bundlers allow and Node 20 does not: a loader hook mends that.
register(new URL("../helpers/json-modules.js", import.meta.url));
const { parseWorkflow, NoOperationTraceWriter } = await import("@actions/workflow-parser");
const { parseAction } = await import("@actions/workflow-parser/actions/index");

after(isolateGitConfig());

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const ACTIONS = join(ROOT, "deploy", "github-actions");
const WORKFLOW = join(ACTIONS, "ralph-tasks.yml");

function workflowErrors(name: string, content: string): string[] {
  return parseWorkflow({ name, content }, new NoOperationTraceWriter()).context.errors.getErrors().map((error) => error.message);
}
function actionErrors(name: string, content: string): string[] {
  return parseAction({ name, content }, new NoOperationTraceWriter()).context.errors.getErrors().map((error) => error.message);
}

interface ActionSpec {
  inputs: Record<string, { required?: boolean; default?: string }>;
  outputs: Record<string, unknown>;
}
interface WorkflowStep {
  id?: string;
  name?: string;
  run?: string;
  uses?: string;
  with?: Record<string, string>;
  if?: string;
  env?: Record<string, string>;
}

describe("deploy/github-actions against GitHub's parser and schema", () => {
  test("the workflow parses without errors, and GitHub's parser refuses a broken copy (control)", () => {
    const content = readFileSync(WORKFLOW, "utf8");
    assert.deepEqual(workflowErrors("ralph-tasks.yml", content), []);
    assert.notDeepEqual(workflowErrors("broken.yml", content.replace("runs-on: ubuntu-latest\n    timeout-minutes: 120", "runs-on: ubuntu-latest\n    timeout-minute: 120")), []);
    assert.notDeepEqual(workflowErrors("broken.yml", content.replace("fail-fast: false", "fail-fast: sometimes")), []);
  });

  test("both composite actions validate against the action schema, which refuses a step without a shell (control)", () => {
    for (const file of ["action.yml", "plan/action.yml"]) {
      const content = readFileSync(join(ACTIONS, file), "utf8");
      assert.deepEqual(actionErrors(file, content), [], file);
      assert.notDeepEqual(actionErrors(file, content.replace(/^ {6}shell: bash\n/m, "")), [], `${file} without a shell`);
    }
  });

  test("the workflow fans out the plan's indexes and uses the actions' real inputs and outputs", () => {
    const workflow = parse(readFileSync(WORKFLOW, "utf8")) as { jobs: Record<string, { outputs?: Record<string, string>; strategy?: { matrix: Record<string, string> }; steps: WorkflowStep[] }> };
    const { plan, loop } = workflow.jobs;
    assert.ok(plan && loop);
    assert.equal(loop.strategy?.matrix.index, "${{ fromJSON(needs.plan.outputs.indexes) }}");
    assert.equal(plan.outputs?.indexes, "${{ steps.plan.outputs.indexes }}");
    for (const job of [plan, loop]) {
      for (const step of job.steps.filter((s) => s.uses?.startsWith("OWNER/ralph/"))) {
        const path = /^OWNER\/ralph\/([^@]+)@/.exec(step.uses ?? "")?.[1] ?? "";
        const spec = parse(readFileSync(join(ROOT, path, "action.yml"), "utf8")) as ActionSpec;
        for (const key of Object.keys(step.with ?? {})) assert.ok(key in spec.inputs, `${step.uses}: input ${key}`);
        for (const [name, input] of Object.entries(spec.inputs)) if (input.required) assert.ok(name in (step.with ?? {}), `${step.uses}: required ${name}`);
        const used = JSON.stringify(job.steps).matchAll(new RegExp(`steps\\.${step.id}\\.outputs\\.([a-z_]+)`, "g"));
        for (const [, output] of used) assert.ok(output && output in spec.outputs, `${step.uses}: output ${output}`);
      }
    }
    assert.equal(loop.steps.find((s) => s.id === "ralph")?.with?.["task-index"], "${{ matrix.index }}");
  });
});

describe("the workflow's push step", () => {
  test("pushes the task's branch to this repository's URL and runs none of the checkout's git config (plain git push runs it)", () => {
    const workflow = parse(readFileSync(WORKFLOW, "utf8")) as { jobs: Record<string, { steps: WorkflowStep[] }> };
    const step = workflow.jobs.loop?.steps.find((s) => s.name === "Push the task's branch");
    assert.ok(step?.run);
    const checkout = tempRepo();
    const remote = `${checkout}-remote.git`;
    git(checkout, "init", "-q", "--bare", remote);
    git(checkout, "remote", "add", "origin", remote);
    git(checkout, "commit", "-q", "--allow-empty", "-m", "the task's work");
    git(checkout, "branch", "ralph/US-2");
    // What the unsandboxed agent writes into the checkout's config.
    const mark = `${checkout}-pwned`;
    const program = `${checkout}-evil.sh`;
    writeFileSync(program, `#!/bin/sh\nprintf '%s' "$GIT_CONFIG_PARAMETERS" >> "${mark}"\nexit 1\n`, { mode: 0o755 });
    git(checkout, "config", "protocol.allow", "always");
    git(checkout, "config", "remote.origin.pushurl", `ext::${program}`);
    git(checkout, "config", `url.ext::${program} #.insteadOf`, `file://${remote}`);
    git(checkout, "config", "credential.helper", `!${program}`);
    const server = `file://${join(remote, "..")}`;
    const repository = remote.split("/").pop()?.replace(/\.git$/, "") ?? "";
    const ran = spawnSync("bash", ["-e", "-c", step.run], { cwd: checkout, encoding: "utf8", env: { ...process.env, BRANCH: "ralph/US-2", TOKEN: "the-job-token", GITHUB_SERVER_URL: server, GITHUB_REPOSITORY: repository } });
    assert.equal(ran.status, 0, ran.stderr);
    assert.equal(existsSync(mark), false, "the agent's program did not run");
    assert.equal(git(remote, "rev-parse", "refs/heads/ralph/US-2"), git(checkout, "rev-parse", "ralph/US-2"));
    // Control: the step as it was (git push origin with the token in -c) runs the agent's program, token and all.
    const auth = `AUTHORIZATION: basic ${Buffer.from("x-access-token:the-job-token").toString("base64")}`;
    const plain = spawnSync("git", ["-c", "core.hooksPath=/dev/null", "-c", `http.https://github.com/.extraheader=${auth}`, "push", "origin", "refs/heads/ralph/US-2:refs/heads/ralph/US-2"], { cwd: checkout, encoding: "utf8" });
    assert.notEqual(plain.status, 0);
    assert.match(readFileSync(mark, "utf8"), /extraheader/);
  });
});

describe("the composite actions' steps run here", () => {
  const dirs: string[] = [];
  after(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));
  const bin = mkdtempSync(join(tmpdir(), "ralph-bin-"));
  dirs.push(bin);
  writeFileSync(join(bin, "ralph"), `#!/bin/sh\nexec '${process.execPath}' '${RALPH}' "$@"\n`, { mode: 0o755 });
  const env = () => cleanEnv({ PATH: `${bin}${delimiter}${process.env.PATH ?? ""}`, GIT_CONFIG_GLOBAL: process.env.GIT_CONFIG_GLOBAL ?? "", GIT_CONFIG_NOSYSTEM: "1", RALPH_DEMO_DELAY_MS: "0" });
  // Installing needs the network; ralph is on PATH here instead, as install-ralph.sh leaves it.
  const skip = ["Install ralph"];
  const project = (): string => {
    const repo = tempRepo();
    const stories = [
      { id: "US-1", title: "one", passes: true },
      { id: "US-2", title: "two", passes: false },
      { id: "US-3", title: "three", passes: false },
    ];
    writeFileSync(join(repo, "prd.json"), `${JSON.stringify({ userStories: stories }, null, 2)}\n`);
    writeFileSync(join(repo, "PROMPT.md"), "Work on the current task.\n");
    git(repo, "add", "-A");
    git(repo, "commit", "-q", "-m", "tasks");
    return repo;
  };

  test("plan: ralph's npm tarball ships the task-list parser task-indexes.mjs loads from the installed package", () => {
    const packed = spawnSync("npm", ["pack", "--dry-run", "--json", "--ignore-scripts"], { cwd: ROOT, encoding: "utf8" });
    assert.equal(packed.status, 0, packed.stderr);
    const [{ files }] = JSON.parse(packed.stdout) as [{ files: Array<{ path: string }> }];
    assert.ok(files.some((file) => file.path === "dist/src/judge/tasks.js"), "dist/src/judge/tasks.js in the tarball");
    assert.match(readFileSync(join(ACTIONS, "task-indexes.mjs"), "utf8"), /"dist", "src", "judge", "tasks\.js"/);
  });

  test("plan: the pending tasks' positions, read with ralph's own parser", async () => {
    const repo = project();
    const run = await runCompositeAction(join(ACTIONS, "plan"), { tasks: "prd.json" }, { workspace: repo, env: { ...env(), RALPH_PACKAGE_DIR: ROOT }, skip });
    assert.equal(run.failed, false, JSON.stringify(run.steps));
    assert.deepEqual(run.outputs, { indexes: "[1,2]", count: "3" });
  });

  test("a loop that ends DONE: outputs, the run directory to upload, and the report in the step summary", async () => {
    const repo = project();
    const run = await runCompositeAction(ACTIONS, { tasks: "prd.json", "task-index": "2", agent: "demo", "agent-package": "" }, { workspace: repo, env: env(), skip });
    assert.equal(run.failed, false, JSON.stringify(run.steps));
    const runDir = join(repo, ".ralph", "runs", "US-3");
    assert.deepEqual(run.outputs, { exit_reason: "DONE", exit_code: "0", branch: "ralph/US-3", cost_usd: "0.0123", run_id: "US-3", run_dir: runDir });
    assert.ok(existsSync(join(runDir, "events.jsonl")));
    const upload = run.steps.find((step) => step.name === "Upload the run directory");
    assert.deepEqual(upload?.with, { name: "ralph-run-US-3", path: runDir, "include-hidden-files": "true", "if-no-files-found": "error", "retention-days": "14" });
    assert.equal(git(repo, "log", "-1", "--format=%an <%ae>", "ralph/US-3"), "github-actions[bot] <41898282+github-actions[bot]@users.noreply.github.com>");
    // The summary is `ralph report`'s, once (ralph report also writes $GITHUB_STEP_SUMMARY itself when set).
    const report = spawnSync(process.execPath, [RALPH, "report", "US-3", "--format", "md"], { cwd: repo, env: { ...env(), GITHUB_STEP_SUMMARY: "" }, encoding: "utf8" });
    assert.equal(report.status, 0, report.stderr);
    assert.match(report.stdout, /US-3/);
    assert.equal(run.summary.trim(), report.stdout.trim());
  });

  test("with a ralph that has no `report` command, the summary is built from `ralph status --json`", async () => {
    const repo = project();
    // An older ralph: `report` is an unknown command, everything else is this ralph.
    const older = mkdtempSync(join(tmpdir(), "ralph-older-"));
    dirs.push(older);
    writeFileSync(join(older, "ralph"), `#!/bin/sh
[ "$1" = report ] && { echo "ralph: unknown command 'report'" >&2; exit 2; }
exec '${process.execPath}' '${RALPH}' "$@"
`, { mode: 0o755 });
    const run = await runCompositeAction(ACTIONS, { tasks: "prd.json", "task-index": "2", agent: "demo", "agent-package": "" }, { workspace: repo, env: { ...env(), PATH: `${older}${delimiter}${env().PATH ?? ""}` }, skip });
    assert.equal(run.failed, false, JSON.stringify(run.steps));
    assert.match(run.summary, /^## ralph run US-3: DONE\n/);
    assert.match(run.summary, /^\| outcome \| DONE \(exit 0\) \|$/m);
    assert.match(run.summary, /^\| branch \| `ralph\/US-3` \|$/m);
    assert.match(run.summary, /^\| cost \| \$0\.0123 \|$/m);
    assert.match(run.summary, /^\| 1 \| continue \| \d+ s \| `[0-9a-f]{12}` \|$/m);
    assert.match(run.summary, /Built from `ralph status --json`/);
  });

  test("a limit with fail-on-error false: MAX_ITERATIONS and exit code 3 as outputs, the step passes; args go one per line", async () => {
    const repo = project();
    const inputs = { tasks: "prd.json", "task-index": "1", agent: "demo", "agent-package": "", "max-iterations": "1", args: "--dry-run\n--dry-run-delay\n10ms", "fail-on-error": "false" };
    const run = await runCompositeAction(ACTIONS, inputs, { workspace: repo, env: env(), skip });
    assert.equal(run.failed, false, JSON.stringify(run.steps));
    assert.deepEqual([run.outputs.exit_reason, run.outputs.exit_code, run.outputs.branch], ["MAX_ITERATIONS", "3", "ralph/US-2"]);
    assert.equal(run.steps.at(-1)?.exitCode, 0);
  });

  test("a usage error: exit code 2, no run to upload, the error in the summary, and the action fails", async () => {
    const repo = project();
    const run = await runCompositeAction(ACTIONS, { tasks: "prd.json", "task-index": "7", agent: "demo", "agent-package": "" }, { workspace: repo, env: env(), skip });
    assert.equal(run.failed, true);
    assert.deepEqual(run.outputs, { exit_reason: "", exit_code: "2", branch: "", cost_usd: "", run_id: "", run_dir: "" });
    assert.equal(run.steps.find((step) => step.name === "Upload the run directory")?.with, undefined);
    assert.equal(run.steps.at(-1)?.exitCode, 2);
    assert.match(run.summary, /^## ralph did not start\n\n```\nralph: --task-index 7: expected 0 to 2, the positions of the 3 task\(s\) in prd\.json\n```\n$/);
    assert.equal(existsSync(join(repo, ".ralph")), false);
  });
});
