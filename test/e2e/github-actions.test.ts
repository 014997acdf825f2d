// deploy/github-actions without GitHub: the workflow through GitHub's own parser (@actions/workflow-parser),
// the composite actions through its action schema, the workflow's references checked against the actions'
// inputs and outputs, and the actions' steps run here with GITHUB_OUTPUT and GITHUB_STEP_SUMMARY files; the
// push, a job of its own fed git bundles, against an agent that steers the loop job's later steps.
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { register } from "node:module";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parse } from "yaml";
import { RALPH, cleanEnv } from "../helpers/cli.js";
import { git, isolateGitConfig, tempRepo } from "../helpers/git-repo.js";
import { parseEnvFile, runCompositeAction } from "../helpers/composite-action.js";

// The parser imports its JSON schemas the way bundlers allow and Node 20 does not: a loader hook mends that.
register(new URL("../helpers/json-modules.js", import.meta.url));
const { parseWorkflow, NoOperationTraceWriter } = await import("@actions/workflow-parser");
const { parseAction } = await import("@actions/workflow-parser/actions/index");

after(isolateGitConfig());

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const ACTIONS = join(ROOT, "deploy", "github-actions");
const WORKFLOW = join(ACTIONS, "ralph-tasks.yml");

function workflowErrors(name: string, content: string): string[] {
  return parseWorkflow({ name, content }, new NoOperationTraceWriter())
    .context.errors.getErrors()
    .map((error) => error.message);
}
function actionErrors(name: string, content: string): string[] {
  return parseAction({ name, content }, new NoOperationTraceWriter())
    .context.errors.getErrors()
    .map((error) => error.message);
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
    assert.notDeepEqual(
      workflowErrors(
        "broken.yml",
        content.replace(
          "runs-on: ubuntu-latest\n    timeout-minutes: 120",
          "runs-on: ubuntu-latest\n    timeout-minute: 120",
        ),
      ),
      [],
    );
    assert.notDeepEqual(workflowErrors("broken.yml", content.replace("fail-fast: false", "fail-fast: sometimes")), []);
  });

  test("the composite actions validate against the action schema, which refuses a step without a shell (control)", () => {
    for (const file of ["action.yml", "plan/action.yml", "push/action.yml"]) {
      const content = readFileSync(join(ACTIONS, file), "utf8");
      assert.deepEqual(actionErrors(file, content), [], file);
      assert.notDeepEqual(
        actionErrors(file, content.replace(/^ {6}shell: bash\n/m, "")),
        [],
        `${file} without a shell`,
      );
    }
  });

  test("the workflow fans out the plan's indexes and uses the actions' real inputs and outputs", () => {
    const workflow = parse(readFileSync(WORKFLOW, "utf8")) as {
      jobs: Record<
        string,
        { outputs?: Record<string, string>; strategy?: { matrix: Record<string, string> }; steps: WorkflowStep[] }
      >;
    };
    const { plan, loop, push } = workflow.jobs;
    assert.ok(plan && loop && push);
    assert.equal(loop.strategy?.matrix.index, "${{ fromJSON(needs.plan.outputs.indexes) }}");
    assert.equal(plan.outputs?.indexes, "${{ steps.plan.outputs.indexes }}");
    for (const job of [plan, loop, push]) {
      for (const step of job.steps.filter((s) => s.uses?.startsWith("OWNER/ralph/"))) {
        const path = /^OWNER\/ralph\/([^@]+)@/.exec(step.uses ?? "")?.[1] ?? "";
        const spec = parse(readFileSync(join(ROOT, path, "action.yml"), "utf8")) as ActionSpec;
        for (const key of Object.keys(step.with ?? {})) assert.ok(key in spec.inputs, `${step.uses}: input ${key}`);
        for (const [name, input] of Object.entries(spec.inputs))
          if (input.required) assert.ok(name in (step.with ?? {}), `${step.uses}: required ${name}`);
        const used = JSON.stringify(job.steps).matchAll(new RegExp(`steps\\.${step.id}\\.outputs\\.([a-z_]+)`, "g"));
        for (const [, output] of used) assert.ok(output && output in spec.outputs, `${step.uses}: output ${output}`);
      }
    }
    assert.equal(loop.steps.find((s) => s.id === "ralph")?.with?.["task-index"], "${{ matrix.index }}");
  });
});

// The push step as it was, in the loop job right after the agent: the control for the tests below.
const SINGLE_JOB_PUSH_STEP = `case "$BRANCH" in ralph/*) ;; *) echo "::error::not a task branch: $BRANCH"; exit 1 ;; esac
tip="$(git -c core.hooksPath=/dev/null -c core.fsmonitor=false rev-parse --verify "refs/heads/$BRANCH^{commit}")"
objects="$(cd "$(git rev-parse --git-common-dir)" && pwd)/objects"
fresh="$(mktemp -d)"
trap 'rm -rf "$fresh"' EXIT
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null GIT_ALLOW_PROTOCOL=https:file GIT_TERMINAL_PROMPT=0
git init --quiet --bare "$fresh"
echo "$objects" > "$fresh/objects/info/alternates"
auth="AUTHORIZATION: basic $(printf 'x-access-token:%s' "$TOKEN" | base64 -w0)"
git --git-dir="$fresh" -c "http.$GITHUB_SERVER_URL/.extraheader=$auth" push --quiet "$GITHUB_SERVER_URL/$GITHUB_REPOSITORY.git" "$tip:refs/heads/$BRANCH"
`;

interface Job {
  permissions?: Record<string, string>;
  needs?: string | string[];
  steps: WorkflowStep[];
}

/** A step of a simulated job: a shipped `run` step, or a stand-in for a `uses` step. */
type SimStep =
  | { name: string; run: string; env?: Record<string, string> }
  | { name: string; act: (env: NodeJS.ProcessEnv, outputs: Record<string, string>) => Promise<void> | void };

/**
 * Runs one job's steps the way a runner does between steps: each `run` step in `bash --noprofile --norc -eo
 * pipefail` with fresh GITHUB_OUTPUT, GITHUB_ENV and GITHUB_PATH files, and after it, what the step wrote to
 * GITHUB_ENV set for every later step and each GITHUB_PATH line put in front of PATH. Every step's outputs
 * go into one record, handed to each stand-in step.
 */
async function runJob(steps: SimStep[], cwd: string, env: NodeJS.ProcessEnv): Promise<Record<string, string>> {
  const files = mkdtempSync(join(tmpdir(), "ralph-job-"));
  const jobEnv: NodeJS.ProcessEnv = { ...env, RUNNER_TEMP: files };
  const outputs: Record<string, string> = {};
  try {
    for (const [n, step] of steps.entries()) {
      const [output, envFile, pathFile] = ["output", "env", "path"].map((kind) => join(files, `${kind}-${n}`)) as [
        string,
        string,
        string,
      ];
      for (const file of [output, envFile, pathFile]) writeFileSync(file, "");
      const stepEnv = { ...jobEnv, GITHUB_OUTPUT: output, GITHUB_ENV: envFile, GITHUB_PATH: pathFile };
      if ("act" in step) await step.act(stepEnv, outputs);
      else {
        const script = join(files, `step-${n}.sh`);
        writeFileSync(script, step.run);
        const ran = spawnSync("bash", ["--noprofile", "--norc", "-eo", "pipefail", script], {
          cwd,
          env: { ...stepEnv, ...step.env },
          encoding: "utf8",
          timeout: 60_000,
        });
        assert.equal(ran.status, 0, `${step.name}: ${ran.stderr}`);
      }
      Object.assign(outputs, parseEnvFile(readFileSync(output, "utf8")));
      Object.assign(jobEnv, parseEnvFile(readFileSync(envFile, "utf8")));
      for (const line of readFileSync(pathFile, "utf8").split("\n"))
        if (line.trim() !== "") jobEnv.PATH = `${line.trim()}${delimiter}${jobEnv.PATH ?? ""}`;
    }
  } finally {
    rmSync(files, { recursive: true, force: true });
  }
  return outputs;
}

/** `text` with each `${{ expression }}` replaced from `values`; an expression not in it fails the test. */
function fill(text: string, values: Record<string, string>): string {
  return text.replace(/\$\{\{\s*([\s\S]*?)\s*\}\}/g, (_, expression: string) => {
    assert.ok(expression in values, `no value for \${{ ${expression} }}`);
    return values[expression] ?? "";
  });
}

describe("the push: a job of its own, fed a bundle, that runs nothing the agent wrote", () => {
  const dirs: string[] = [];
  after(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));
  const temp = (prefix: string): string => {
    const dir = mkdtempSync(join(tmpdir(), prefix));
    dirs.push(dir);
    return dir;
  };
  const workflow = () =>
    parse(readFileSync(WORKFLOW, "utf8")) as { permissions?: Record<string, string>; jobs: Record<string, Job> };
  const TOKEN = "the-job-token-0123456789";
  const TOKEN_HEADER = Buffer.from(`x-access-token:${TOKEN}`).toString("base64");

  /** A checkout, and a bare repository owner/repo.git under a directory standing in for the server. */
  function checkoutAndRemote(): { checkout: string; remote: string; server: string; repository: string } {
    const checkout = tempRepo();
    const server = temp("ralph-server-");
    const remote = join(server, "owner", "repo.git");
    git(checkout, "init", "-q", "--bare", remote);
    return { checkout, remote, server: `file://${server}`, repository: "owner/repo" };
  }

  /**
   * The unsandboxed agent's step (ralph's place in the loop job): it commits the task's work on ralph/US-2,
   * then puts its own `git` first on PATH for every later step ($GITHUB_PATH), has every later bash step source
   * its file (BASH_ENV through $GITHUB_ENV), and points the checkout's config at its program. Its programs
   * record their argv and environment in `mark`, then carry on as git would.
   */
  function agentStep(mark: string): SimStep {
    const evil = temp("ralph-agent-");
    return {
      name: "the agent",
      run: `git commit -q --allow-empty -m "the task's work"
git branch ralph/US-2
real="$(command -v git)"
mkdir -p "${evil}/bin"
printf '#!/bin/sh\\n{ printf "argv:"; printf " %%s" "$@"; printf "\\\\n"; env; } >> "${mark}"\\nexec "%s" "$@"\\n' "$real" > "${evil}/bin/git"
chmod +x "${evil}/bin/git"
printf 'env >> "${mark}"\\n' > "${evil}/bash-env.sh"
echo "${evil}/bin" >> "$GITHUB_PATH"
echo "BASH_ENV=${evil}/bash-env.sh" >> "$GITHUB_ENV"
git config core.fsmonitor "${evil}/bash-env.sh"
git config credential.helper "!${evil}/bash-env.sh"
git config remote.origin.pushurl "ext::${evil}/bash-env.sh"
{ echo branch=ralph/US-2; echo exit_reason=DONE; echo exit_code=0; echo cost_usd=0.01; } >> "$GITHUB_OUTPUT"
`,
    };
  }

  test("only the push job holds the write token, and it checks out nothing, runs no step of its own and reads no loop output", () => {
    const { permissions, jobs } = workflow();
    assert.deepEqual(permissions, { contents: "read" });
    assert.deepEqual(jobs.loop?.permissions, { contents: "read" });
    const writers = Object.entries(jobs).filter(([, job]) => Object.values(job.permissions ?? {}).includes("write"));
    assert.deepEqual(
      writers.map(([name]) => name),
      ["push"],
    );
    const push = jobs.push;
    assert.ok(push);
    assert.deepEqual(push.needs, ["plan", "loop"]);
    // Its steps: the bundles, node, and ralph's push action (from ralph's repository, not the checkout); no run step.
    assert.deepEqual(
      push.steps.map((step) => step.uses?.replace(/@.*$/, "") ?? `run: ${step.run}`),
      ["actions/download-artifact", "actions/setup-node", "OWNER/ralph/deploy/github-actions/push"],
    );
    assert.doesNotMatch(JSON.stringify(push), /needs\.loop|matrix\./);
    assert.equal(push.steps[0]?.with?.pattern, "ralph-branch-*");
    const action = parse(readFileSync(join(ACTIONS, "push", "action.yml"), "utf8")) as {
      runs: { steps: WorkflowStep[] };
    };
    assert.deepEqual(
      action.runs.steps.map((step) => step.run),
      ['node "$GITHUB_ACTION_PATH/../push-branches.mjs"'],
    );
    // The loop job pushes nothing itself: its only way out for the branch is the bundle artifact.
    const loop = jobs.loop;
    assert.ok(loop);
    assert.doesNotMatch(JSON.stringify(loop.steps), /github\.token|secrets\.GITHUB_TOKEN|git push/);
    const upload = loop.steps.find((step) => step.uses?.startsWith("actions/upload-artifact@"));
    assert.equal(upload?.with?.name, "ralph-branch-${{ matrix.index }}");
  });

  test("an agent writing $GITHUB_PATH, $GITHUB_ENV and .git/config never sees the token; the old single job ran its program with it (control)", async () => {
    const jobs = workflow().jobs;
    const loop = jobs.loop;
    const push = jobs.push;
    assert.ok(loop && push);
    const base = cleanEnv({ GIT_CONFIG_GLOBAL: process.env.GIT_CONFIG_GLOBAL ?? "", GIT_CONFIG_NOSYSTEM: "1" });

    // Control: the old layout, the push step in the loop job after the agent, with the token in its env.
    {
      const { checkout, remote, server, repository } = checkoutAndRemote();
      const mark = `${checkout}-mark`;
      const values = { GITHUB_SERVER_URL: server, GITHUB_REPOSITORY: repository };
      await runJob(
        [
          agentStep(mark),
          {
            name: "Push the task's branch (single job)",
            run: SINGLE_JOB_PUSH_STEP,
            env: { BRANCH: "ralph/US-2", TOKEN, ...values },
          },
        ],
        checkout,
        { ...base, ...values },
      );
      const seen = readFileSync(mark, "utf8");
      assert.match(
        seen,
        new RegExp(`TOKEN=${TOKEN}`),
        "the agent's BASH_ENV file and git ran with the token in their environment",
      );
      assert.match(
        seen,
        new RegExp(`argv:.*extraheader=AUTHORIZATION: basic ${TOKEN_HEADER}`),
        "the agent's git got the token in its argv",
      );
      assert.equal(
        git(remote, "rev-parse", "refs/heads/ralph/US-2"),
        git(checkout, "rev-parse", "ralph/US-2"),
        "and pushed as if nothing happened",
      );
    }

    // The shipped layout: the loop job's steps after the agent, then the push job on a runner of its own.
    const { checkout, remote, server, repository } = checkoutAndRemote();
    const mark = `${checkout}-mark`;
    const artifacts = temp("ralph-artifacts-");
    const afterAgent = loop.steps.slice(loop.steps.findIndex((step) => step.id === "ralph") + 1);
    const values = (env: NodeJS.ProcessEnv, outputs: Record<string, string>): Record<string, string> => ({
      ...Object.fromEntries(Object.entries(outputs).map(([key, value]) => [`steps.ralph.outputs.${key}`, value])),
      "matrix.index": "1",
      "runner.temp": env.RUNNER_TEMP ?? "",
    });
    const loopSteps: SimStep[] = afterAgent.flatMap((step): SimStep[] => {
      // Its `if` is the task having a branch (true here) or ralph failing (false here).
      if (step.name === "Fail unless the task is done") return [];
      assert.equal(
        step.if,
        "steps.ralph.outputs.branch != '' && steps.ralph.outputs.exit_reason != 'NO_WORK'",
        step.name,
      );
      if (step.run !== undefined) {
        const run = step.run;
        return [
          {
            name: step.name ?? "",
            act: (env, outputs) => {
              const stepEnv = Object.fromEntries(
                Object.entries(step.env ?? {}).map(([key, value]) => [key, fill(String(value), values(env, outputs))]),
              );
              const ran = spawnSync(
                "bash",
                ["--noprofile", "--norc", "-eo", "pipefail", "-c", fill(run, values(env, outputs))],
                { cwd: checkout, env: { ...env, ...stepEnv }, encoding: "utf8" },
              );
              assert.equal(ran.status, 0, `${step.name}: ${ran.stderr}`);
            },
          },
        ];
      }
      assert.ok(
        step.uses?.startsWith("actions/upload-artifact@"),
        `a loop step the test does not know: ${JSON.stringify(step)}`,
      );
      // upload-artifact: the file, under the artifact's name.
      return [
        {
          name: "upload-artifact",
          act: (env, outputs) => {
            const name = fill(step.with?.name ?? "", values(env, outputs));
            mkdirSync(join(artifacts, name));
            copyFileSync(fill(step.with?.path ?? "", values(env, outputs)), join(artifacts, name, "branch.bundle"));
          },
        },
      ];
    });
    await runJob([agentStep(mark), ...loopSteps], checkout, base);
    assert.ok(existsSync(join(artifacts, "ralph-branch-1", "branch.bundle")));
    // The push job: a fresh runner (no PATH, env or checkout from the loop job), the bundles downloaded, the action run.
    const runnerTemp = temp("ralph-push-runner-");
    const pushEnv = { ...base, GITHUB_SERVER_URL: server, GITHUB_REPOSITORY: repository };
    const pushValues = { "runner.temp": runnerTemp, "github.token": TOKEN };
    for (const step of push.steps) {
      if (step.uses?.startsWith("actions/download-artifact@"))
        cpSync(artifacts, fill(step.with?.path ?? "", pushValues), { recursive: true });
      else if (step.uses?.startsWith("actions/setup-node@")) continue;
      else if (step.uses?.startsWith("OWNER/ralph/deploy/github-actions/push@")) {
        const inputs = Object.fromEntries(
          Object.entries(step.with ?? {}).map(([key, value]) => [key, fill(String(value), pushValues)]),
        );
        const run = await runCompositeAction(join(ACTIONS, "push"), inputs, { workspace: runnerTemp, env: pushEnv });
        assert.equal(run.failed, false, JSON.stringify(run.steps));
        assert.match(run.steps[0]?.stdout ?? "", /^pushed ralph\/US-2 \([0-9a-f]{12}\)$/m);
      } else assert.fail(`a push step the test does not know: ${JSON.stringify(step)}`);
    }
    assert.equal(git(remote, "rev-parse", "refs/heads/ralph/US-2"), git(checkout, "rev-parse", "ralph/US-2"));
    // The agent's programs did run in the loop job (the attack is live), but never with the token.
    const seen = readFileSync(mark, "utf8");
    assert.match(seen, /argv: bundle create/);
    assert.equal(seen.includes(TOKEN) || seen.includes(TOKEN_HEADER), false);
  });

  /** push-branches.mjs as the push action runs it, on the bundles in `bundles`; `path` first on PATH. */
  function pushScript(
    bundles: string,
    server: string,
    path = "",
  ): { status: number | null; stdout: string; stderr: string } {
    const env = cleanEnv({
      BUNDLES_DIR: bundles,
      TOKEN,
      GITHUB_SERVER_URL: server,
      GITHUB_REPOSITORY: "owner/repo",
      PATH: `${path}${path ? delimiter : ""}${process.env.PATH ?? ""}`,
    });
    return spawnSync(process.execPath, [join(ACTIONS, "push-branches.mjs")], { env, encoding: "utf8" });
  }

  test("push-branches.mjs pushes a good bundle's one branch and hands git the token only in its environment", () => {
    const { checkout, remote, server } = checkoutAndRemote();
    git(checkout, "commit", "-q", "--allow-empty", "-m", "the task's work");
    git(checkout, "branch", "ralph/US-2");
    const bundles = temp("ralph-bundles-");
    mkdirSync(join(bundles, "ralph-branch-1"));
    git(checkout, "bundle", "create", "-q", join(bundles, "ralph-branch-1", "branch.bundle"), "refs/heads/ralph/US-2");
    // A git that logs its argv and environment, then runs git.
    const wrap = temp("ralph-git-log-");
    const log = join(wrap, "log");
    const real = spawnSync("sh", ["-c", "command -v git"], { encoding: "utf8" }).stdout.trim();
    writeFileSync(
      join(wrap, "git"),
      `#!/bin/sh
{ printf 'argv:'; printf ' %s' "$@"; printf '\n'; env | sed 's/^/env: /'; } >> "${log}"
exec "${real}" "$@"
`,
      { mode: 0o755 },
    );
    const ran = pushScript(bundles, server, wrap);
    assert.equal(ran.status, 0, ran.stdout + ran.stderr);
    assert.equal(git(remote, "rev-parse", "refs/heads/ralph/US-2"), git(checkout, "rev-parse", "ralph/US-2"));
    assert.deepEqual(git(remote, "for-each-ref", "--format=%(refname)").split("\n"), ["refs/heads/ralph/US-2"]);
    const lines = readFileSync(log, "utf8").split("\n");
    assert.ok(
      lines.some((line) => line === `env: GIT_CONFIG_VALUE_1=AUTHORIZATION: basic ${TOKEN_HEADER}`),
      "the push's git gets the header in its environment",
    );
    assert.equal(
      lines
        .filter((line) => line.startsWith("argv:"))
        .some((line) => line.includes(TOKEN) || line.includes(TOKEN_HEADER)),
      false,
      "no git command line holds the token",
    );
    // Control: the old push step's command line held it.
    assert.match(SINGLE_JOB_PUSH_STEP, /-c "http\.\$GITHUB_SERVER_URL\/\.extraheader=\$auth" push/);
  });

  test("push-branches.mjs refuses hostile bundles: more refs, a non-ralph ref, an option for a ref, missing history, a second claim, not a bundle", () => {
    const { checkout, remote, server } = checkoutAndRemote();
    const main = git(checkout, "rev-parse", "HEAD");
    git(checkout, "commit", "-q", "--allow-empty", "-m", "the task's work");
    git(checkout, "branch", "ralph/US-2");
    git(checkout, "branch", "ralph/US-3");
    const program = join(temp("ralph-evil-"), "evil.sh");
    const mark = `${program}.ran`;
    writeFileSync(program, `#!/bin/sh\ntouch "${mark}"\nexit 1\n`, { mode: 0o755 });
    const bundles = temp("ralph-bundles-");
    const bundle = (name: string, ...refs: string[]): string => {
      mkdirSync(join(bundles, name));
      const file = join(bundles, name, "branch.bundle");
      git(checkout, "bundle", "create", "-q", file, ...refs);
      return file;
    };
    bundle("a-two-refs", "refs/heads/ralph/US-2", "refs/heads/ralph/US-3");
    bundle("b-main", `refs/heads/${git(checkout, "branch", "--show-current")}`);
    // A bundle of ralph/US-3 whose header names its ref as an option git push would take.
    const option = bundle("c-option", "refs/heads/ralph/US-3");
    const bytes = readFileSync(option);
    writeFileSync(
      option,
      Buffer.concat([
        Buffer.from(bytes.toString("latin1").replace("refs/heads/ralph/US-3", `--receive-pack=${program}`), "latin1"),
      ]),
    );
    assert.match(git(checkout, "bundle", "list-heads", option), new RegExp(`--receive-pack=${program}`));
    bundle("d-thin", "refs/heads/ralph/US-3", `^${main}`);
    writeFileSync(join(bundles, "e-not-a-bundle"), "# v2 git bundle\n");
    bundle("f-good", "refs/heads/ralph/US-2");
    bundle("g-second-claim", "refs/heads/ralph/US-2");
    const ran = pushScript(bundles, server);
    assert.equal(ran.status, 2, ran.stdout + ran.stderr);
    const errors = ran.stdout.split("\n").filter((line) => line.startsWith("::error::"));
    assert.deepEqual(
      errors.map((line) => /^::error::bundle ([^:]+):/.exec(line)?.[1]),
      [
        "a-two-refs/branch.bundle",
        "b-main/branch.bundle",
        "c-option/branch.bundle",
        "d-thin/branch.bundle",
        "e-not-a-bundle",
        "g-second-claim/branch.bundle",
      ],
    );
    assert.match(errors[0] ?? "", /expected exactly one ref, found 2/);
    assert.match(errors[1] ?? "", /expected one ref refs\/heads\/ralph\/<id>/);
    assert.match(errors[2] ?? "", /expected one ref refs\/heads\/ralph\/<id>, found "--receive-pack=/);
    assert.match(errors[3] ?? "", /prerequisites/);
    assert.match(errors[5] ?? "", /more than one bundle/);
    assert.match(ran.stdout, /^pushed ralph\/US-2 /m);
    assert.equal(existsSync(mark), false, "the option-named ref ran nothing");
    assert.deepEqual(git(remote, "for-each-ref", "--format=%(refname)").split("\n"), ["refs/heads/ralph/US-2"]);
    // Control: git push takes that header's ref for an option when a script puts it on the command line.
    const naive = spawnSync(
      "git",
      ["push", `${server}/owner/repo.git`, `--receive-pack=${program}`, "refs/heads/ralph/US-3:refs/heads/ralph/US-3"],
      { cwd: checkout, encoding: "utf8" },
    );
    assert.notEqual(naive.status, 0);
    assert.equal(existsSync(mark), true, "git push ran the program the ref named");
  });

  test("push-branches.mjs never forces: a bundle that rewrites a pushed branch is refused by the remote", () => {
    const { checkout, remote, server } = checkoutAndRemote();
    git(checkout, "commit", "-q", "--allow-empty", "-m", "the task's work");
    git(checkout, "push", "-q", remote, "HEAD:refs/heads/ralph/US-2");
    const pushed = git(remote, "rev-parse", "refs/heads/ralph/US-2");
    git(checkout, "checkout", "-q", "--orphan", "other");
    git(checkout, "commit", "-q", "--allow-empty", "-m", "unrelated history");
    git(checkout, "branch", "-f", "ralph/US-2", "other");
    const bundles = temp("ralph-bundles-");
    git(checkout, "bundle", "create", "-q", join(bundles, "branch.bundle"), "refs/heads/ralph/US-2");
    const ran = pushScript(bundles, server);
    assert.equal(ran.status, 1, ran.stdout + ran.stderr);
    assert.match(ran.stdout, /^::error::bundle branch\.bundle: git push refs\/heads\/ralph\/US-2: /m);
    assert.equal(git(remote, "rev-parse", "refs/heads/ralph/US-2"), pushed);
  });
});

describe("the composite actions' steps run here", () => {
  const dirs: string[] = [];
  after(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));
  const bin = mkdtempSync(join(tmpdir(), "ralph-bin-"));
  dirs.push(bin);
  writeFileSync(join(bin, "ralph"), `#!/bin/sh\nexec '${process.execPath}' '${RALPH}' "$@"\n`, { mode: 0o755 });
  const env = () =>
    cleanEnv({
      PATH: `${bin}${delimiter}${process.env.PATH ?? ""}`,
      GIT_CONFIG_GLOBAL: process.env.GIT_CONFIG_GLOBAL ?? "",
      GIT_CONFIG_NOSYSTEM: "1",
      RALPH_DEMO_DELAY_MS: "0",
    });
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
    const packed = spawnSync("npm", ["pack", "--dry-run", "--json", "--ignore-scripts"], {
      cwd: ROOT,
      encoding: "utf8",
    });
    assert.equal(packed.status, 0, packed.stderr);
    const [{ files }] = JSON.parse(packed.stdout) as [{ files: Array<{ path: string }> }];
    assert.ok(
      files.some((file) => file.path === "dist/src/judge/tasks.js"),
      "dist/src/judge/tasks.js in the tarball",
    );
    assert.match(readFileSync(join(ACTIONS, "task-indexes.mjs"), "utf8"), /"dist", "src", "judge", "tasks\.js"/);
  });

  test("plan: the pending tasks' positions, read with ralph's own parser", async () => {
    const repo = project();
    const run = await runCompositeAction(
      join(ACTIONS, "plan"),
      { tasks: "prd.json" },
      { workspace: repo, env: { ...env(), RALPH_PACKAGE_DIR: ROOT }, skip },
    );
    assert.equal(run.failed, false, JSON.stringify(run.steps));
    assert.deepEqual(run.outputs, { indexes: "[1,2]", count: "3" });
  });

  test("a loop that ends DONE: outputs, the run directory to upload, and the report in the step summary", async () => {
    const repo = project();
    const run = await runCompositeAction(
      ACTIONS,
      { tasks: "prd.json", "task-index": "2", agent: "demo", "agent-package": "" },
      { workspace: repo, env: env(), skip },
    );
    assert.equal(run.failed, false, JSON.stringify(run.steps));
    const runDir = join(repo, ".ralph", "runs", "US-3");
    const { spend, ...outputs } = run.outputs;
    assert.deepEqual(outputs, {
      exit_reason: "DONE",
      exit_code: "0",
      branch: "ralph/US-3",
      cost_usd: "0.0123",
      run_id: "US-3",
      run_dir: runDir,
    });
    // The family's spend in the JSON every part of a fan-out reports, so that the parts can be added up.
    assert.deepEqual(JSON.parse(spend ?? ""), {
      run: "US-3",
      cost_usd: 0.0123,
      cost_source: "reported",
      calls: 1,
      tokens: { input: 1200, output: 340, cache_read: 0, cache_write: 0, total: 1540 },
    });
    assert.ok(existsSync(join(runDir, "events.jsonl")));
    const upload = run.steps.find((step) => step.name === "Upload the run directory");
    assert.deepEqual(upload?.with, {
      name: "ralph-run-US-3",
      path: runDir,
      "include-hidden-files": "true",
      "if-no-files-found": "error",
      "retention-days": "14",
    });
    assert.equal(
      git(repo, "log", "-1", "--format=%an <%ae>", "ralph/US-3"),
      "github-actions[bot] <41898282+github-actions[bot]@users.noreply.github.com>",
    );
    // The summary is `ralph report`'s, once (ralph report also writes $GITHUB_STEP_SUMMARY itself when set).
    const report = spawnSync(process.execPath, [RALPH, "report", "US-3", "--format", "md"], {
      cwd: repo,
      env: { ...env(), GITHUB_STEP_SUMMARY: "" },
      encoding: "utf8",
    });
    assert.equal(report.status, 0, report.stderr);
    assert.match(report.stdout, /US-3/);
    assert.equal(run.summary.trim(), report.stdout.trim());
  });

  test("with a ralph that has no `report` command, the summary is built from `ralph status --json`", async () => {
    const repo = project();
    // An older ralph: `report` is an unknown command, everything else is this ralph.
    const older = mkdtempSync(join(tmpdir(), "ralph-older-"));
    dirs.push(older);
    writeFileSync(
      join(older, "ralph"),
      `#!/bin/sh
[ "$1" = report ] && { echo "ralph: unknown command 'report'" >&2; exit 2; }
exec '${process.execPath}' '${RALPH}' "$@"
`,
      { mode: 0o755 },
    );
    const run = await runCompositeAction(
      ACTIONS,
      { tasks: "prd.json", "task-index": "2", agent: "demo", "agent-package": "" },
      { workspace: repo, env: { ...env(), PATH: `${older}${delimiter}${env().PATH ?? ""}` }, skip },
    );
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
    const inputs = {
      tasks: "prd.json",
      "task-index": "1",
      agent: "demo",
      "agent-package": "",
      "max-iterations": "1",
      args: "--check\nfalse",
      "fail-on-error": "false",
    };
    const run = await runCompositeAction(ACTIONS, inputs, { workspace: repo, env: env(), skip });
    assert.equal(run.failed, false, JSON.stringify(run.steps));
    assert.deepEqual(
      [run.outputs.exit_reason, run.outputs.exit_code, run.outputs.branch],
      ["MAX_ITERATIONS", "3", "ralph/US-2"],
    );
    assert.equal(run.steps.at(-1)?.exitCode, 0);
  });

  test("a usage error: exit code 2, no run to upload, the error in the summary, and the action fails", async () => {
    const repo = project();
    const run = await runCompositeAction(
      ACTIONS,
      { tasks: "prd.json", "task-index": "7", agent: "demo", "agent-package": "" },
      { workspace: repo, env: env(), skip },
    );
    assert.equal(run.failed, true);
    assert.deepEqual(run.outputs, {
      exit_reason: "",
      exit_code: "2",
      branch: "",
      cost_usd: "",
      spend: "",
      run_id: "",
      run_dir: "",
    });
    assert.equal(run.steps.find((step) => step.name === "Upload the run directory")?.with, undefined);
    assert.equal(run.steps.at(-1)?.exitCode, 2);
    assert.match(
      run.summary,
      /^## ralph did not start\n\n```\nralph: --task-index 7: expected 0 to 2, the positions of the 3 task\(s\) in prd\.json\n```\n$/,
    );
    assert.equal(existsSync(join(repo, ".ralph")), false);
  });
});
