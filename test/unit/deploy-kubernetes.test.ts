// deploy/kubernetes without a cluster: the manifests against the Kubernetes API schema (kubernetes-models),
// the Job controller's own rules the schema does not hold, podFailurePolicy against ralph's exit codes, and
// the Containerfile against the files it copies.
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { accessSync, constants, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Job } from "kubernetes-models/batch/v1";
import { Secret } from "kubernetes-models/v1";
import { validate as lintContainerfile } from "dockerfile-utils";
import { EXIT_REASONS, exitCodeFor, signalExitStatus } from "../../src/exit/exit-reasons.js";
import { git, isolateGitConfig, tempRepo } from "../helpers/git-repo.js";
import { KUBERNETES_DIR, argValue, podFailureAction, readJob, readManifests } from "../helpers/job-manifest.js";

after(isolateGitConfig());

const ROOT = join(KUBERNETES_DIR, "..", "..");
const job = readJob();
const pod = job.spec.template.spec;
const container = pod.containers[0];

describe("deploy/kubernetes manifests against the Kubernetes API schema", () => {
  test("job.yaml's Job and secret.yaml's Secret validate", () => {
    assert.equal(readManifests("job.yaml").length, 1);
    new Job(job as never).validate();
    const secrets = readManifests("secret.yaml");
    assert.equal(secrets.length, 1);
    new Secret(secrets[0] as never).validate();
  });

  test("control: the validator refuses a Job with a wrong value in each field this recipe relies on", () => {
    const broken: Array<[string, (copy: ReturnType<typeof readJob>) => void]> = [
      ["action Fail", (copy) => ((copy.spec.podFailurePolicy?.rules[1] as { action: string }).action = "Fail")],
      ["completionMode indexed", (copy) => (copy.spec.completionMode = "indexed")],
      [
        "grace as a text",
        (copy) =>
          ((copy.spec.template.spec as { terminationGracePeriodSeconds: unknown }).terminationGracePeriodSeconds =
            "45"),
      ],
      [
        "operator Is",
        (copy) => ((copy.spec.podFailurePolicy?.rules[1]?.onExitCodes as { operator: string }).operator = "Is"),
      ],
      [
        "args as a text",
        (copy) => ((copy.spec.template.spec.containers[0] as { args: unknown }).args = "--tasks prd.json"),
      ],
    ];
    for (const [what, breakIt] of broken) {
      const copy = structuredClone(job);
      breakIt(copy);
      assert.throws(() => new Job(copy as never).validate(), /must be/, what);
    }
  });

  test("the Job controller's rules the schema does not check", () => {
    const { spec } = job;
    assert.equal(spec.completionMode, "Indexed", "backoffLimitPerIndex and JOB_COMPLETION_INDEX need an Indexed Job");
    assert.equal(pod.restartPolicy, "Never", "a podFailurePolicy needs restartPolicy Never");
    assert.ok(
      Number.isInteger(spec.completions) &&
        Number.isInteger(spec.parallelism) &&
        Number.isInteger(spec.backoffLimitPerIndex),
    );
    assert.ok((spec.maxFailedIndexes ?? 0) <= (spec.completions ?? 0), "maxFailedIndexes is at most completions");
    for (const rule of spec.podFailurePolicy?.rules ?? []) {
      assert.ok(
        Boolean(rule.onExitCodes) !== Boolean(rule.onPodConditions),
        "a rule has onExitCodes or onPodConditions, not both",
      );
      if (rule.onExitCodes?.operator === "In")
        assert.equal(rule.onExitCodes.values.includes(0), false, "In may not list 0");
      if (rule.onExitCodes?.containerName !== undefined)
        assert.ok(pod.containers.some((c) => c.name === rule.onExitCodes?.containerName));
      if (rule.action === "FailIndex")
        assert.ok(spec.backoffLimitPerIndex !== undefined, "FailIndex needs backoffLimitPerIndex");
    }
  });

  test("podFailurePolicy keyed to ralph's exit codes: limits, failures and usage errors fail the index, signals are retried", () => {
    assert.ok(container);
    const expected = (reason: (typeof EXIT_REASONS)[number]): string => {
      switch (reason) {
        case "DONE":
        case "NO_WORK":
        case "STOPPED":
        case "DRY_RUN":
          return "Succeeded";
        case "MAX_ITERATIONS":
        case "BUDGET_EXCEEDED":
        case "RUNTIME_EXCEEDED":
        case "FAILED":
        case "STALLED":
          return "FailIndex";
        case "INTERRUPTED":
          return "Count";
        default: {
          const never: never = reason;
          return never;
        }
      }
    };
    for (const reason of EXIT_REASONS) {
      const codes =
        reason === "INTERRUPTED"
          ? (["SIGTERM", "SIGINT", "SIGHUP"] as const).map((signal) => exitCodeFor(reason, signal))
          : [exitCodeFor(reason)];
      for (const exitCode of codes) {
        const action: string =
          exitCode === 0 ? "Succeeded" : podFailureAction(job, { container: container.name, exitCode });
        assert.equal(action, expected(reason), `${reason} (exit ${exitCode})`);
      }
    }
    assert.equal(podFailureAction(job, { container: container.name, exitCode: 2 }), "FailIndex", "a usage error");
    assert.equal(
      podFailureAction(job, { container: container.name, exitCode: signalExitStatus("SIGKILL") }),
      "Count",
      "SIGKILL, the OOM killer",
    );
    assert.equal(
      podFailureAction(job, { container: container.name, exitCode: 143, conditions: ["DisruptionTarget"] }),
      "Ignore",
      "an eviction",
    );
    // Known-false control: a policy with no rules counts everything, so the table above is the manifest's doing.
    assert.equal(
      podFailureAction(
        { ...job, spec: { ...job.spec, podFailurePolicy: { rules: [] } } },
        { container: container.name, exitCode: 2 },
      ),
      "Count",
    );
  });

  test("the pod leaves ralph its --grace, gets its credentials from secret.yaml's keys, and has ralph's arguments right", () => {
    assert.ok(container);
    const args = container.args ?? [];
    const grace = Number.parseInt(argValue(args, "--grace") ?? "", 10);
    assert.ok(
      (pod.terminationGracePeriodSeconds ?? 30) >= grace + 10,
      `terminationGracePeriodSeconds ${pod.terminationGracePeriodSeconds} vs --grace ${grace}s`,
    );
    assert.ok(argValue(args, "--tasks"), "the pods need --tasks");
    for (const own of ["--task-index", "--worktree", "--notify", "--parallel"])
      assert.equal(args.includes(own), false, `pod-start.sh adds ${own} (or it does not belong)`);
    const secret = readManifests("secret.yaml")[0] as {
      metadata: { name: string };
      stringData: Record<string, string>;
    };
    for (const variable of container.env ?? []) {
      const ref = (variable.valueFrom as { secretKeyRef?: { name: string; key: string } } | undefined)?.secretKeyRef;
      if (!ref) continue;
      assert.equal(ref.name, secret.metadata.name, variable.name);
      assert.ok(ref.key in secret.stringData, `${variable.name}: key ${ref.key} in secret.yaml`);
    }
    assert.ok((container.env ?? []).some((variable) => variable.name === "RALPH_REMOTE"));
  });
});

describe("deploy/kubernetes Containerfile and pod scripts", () => {
  const containerfile = readFileSync(join(KUBERNETES_DIR, "Containerfile"), "utf8");

  test("the Containerfile passes a Dockerfile linter (dockerfile-utils), which refuses a broken copy (control)", () => {
    assert.deepEqual(
      lintContainerfile(containerfile).map((problem) => `${problem.range.start.line + 1}: ${problem.message}`),
      [],
    );
    assert.notDeepEqual(lintContainerfile(containerfile.replace("ENTRYPOINT [", "ENTRYPIONT [")), []);
    assert.notDeepEqual(
      lintContainerfile(containerfile.replace("COPY --from=pack /tmp/pack/ /tmp/pack/", "COPY --from=pack /tmp/pack/")),
      [],
    );
  });

  test("every COPY source exists in the repository, and the entry point is the copied pod-start.sh", () => {
    const copies = [...containerfile.matchAll(/^COPY (?!--from)(.+)$/gm)].map((match) =>
      (match[1] ?? "").trim().split(/\s+/).slice(0, -1),
    );
    assert.ok(copies.length >= 4);
    for (const source of copies.flat()) assert.ok(existsSync(join(ROOT, source)), `COPY ${source}`);
    // What `npm run build` reads is copied into the build stage.
    const build =
      (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { scripts: Record<string, string> }).scripts
        .build ?? "";
    for (const [, dir] of build.matchAll(/\b(scripts|src|web|bench|test)\//g))
      assert.ok(copies.flat().includes(dir ?? ""), `the build reads ${dir}/`);
    assert.ok(copies.flat().includes("tsconfig.json"));
    assert.match(containerfile, /^ENTRYPOINT \["\/usr\/local\/lib\/ralph-pod\/pod-start\.sh"\]$/m);
    assert.match(
      containerfile,
      /^COPY deploy\/kubernetes\/pod-start\.sh deploy\/kubernetes\/push-branch\.mjs \/usr\/local\/lib\/ralph-pod\/$/m,
    );
    for (const script of ["pod-start.sh", "push-branch.mjs"]) accessSync(join(KUBERNETES_DIR, script), constants.X_OK);
  });

  test("Node 20, ralph from its npm tarball, git, bubblewrap and perl, and the agent CLI pinned as the tests pin it (test/clis)", () => {
    assert.match(containerfile, /^FROM docker\.io\/library\/node:20-/m);
    assert.match(containerfile, /npm pack .*--pack-destination \/tmp\/pack/);
    assert.match(containerfile, /npm install -g .*\/tmp\/pack\/\*\.tgz/);
    for (const name of ["git", "bubblewrap", "perl-base"])
      assert.match(containerfile, new RegExp(`apt-get install [^\\n]*\\b${name}\\b`));
    const clis = join(ROOT, "test", "clis");
    const devDependencies = Object.assign(
      {},
      ...readdirSync(clis).map(
        (dir) =>
          (
            JSON.parse(readFileSync(join(clis, dir, "package.json"), "utf8")) as {
              devDependencies: Record<string, string>;
            }
          ).devDependencies,
      ),
    ) as Record<string, string>;
    const pinned = /^ARG AGENT_PACKAGE=(@[^@\s]+\/[^@\s]+)@(\S+)$/m.exec(containerfile);
    assert.ok(pinned?.[1] && pinned[2], "AGENT_PACKAGE names a package and a version");
    assert.equal(devDependencies[pinned[1]], pinned[2]);
  });

  test("pod-start.sh is valid POSIX sh and ends in exec ralph (so ralph is PID 1)", () => {
    const script = readFileSync(join(KUBERNETES_DIR, "pod-start.sh"), "utf8");
    const checked = spawnSync("sh", ["-n", join(KUBERNETES_DIR, "pod-start.sh")], { encoding: "utf8" });
    assert.equal(checked.status, 0, checked.stderr);
    assert.match(script, /^exec ralph run --task-index job --worktree /m);
    const missing = spawnSync("sh", [join(KUBERNETES_DIR, "pod-start.sh")], {
      encoding: "utf8",
      env: { PATH: process.env.PATH ?? "" },
    });
    assert.notEqual(missing.status, 0);
    assert.match(missing.stderr, /RALPH_REMOTE/);
  });
});

describe("push-branch.mjs, the pod's notification command", () => {
  const PUSH = join(KUBERNETES_DIR, "push-branch.mjs");
  const setup = () => {
    const clone = tempRepo();
    const remote = `${clone}-remote.git`;
    git(clone, "clone", "-q", "--bare", clone, remote);
    const base = git(clone, "rev-parse", "HEAD");
    git(clone, "branch", "ralph/US-1");
    return { clone, remote, base };
  };
  const push = (cwd: string, event: unknown, env: Record<string, string>) =>
    spawnSync(process.execPath, [PUSH], {
      cwd,
      input: JSON.stringify(event),
      encoding: "utf8",
      env: { ...process.env, ...env },
    });
  const remoteHas = (remote: string, ref: string) =>
    spawnSync("git", ["--git-dir", remote, "rev-parse", "-q", "--verify", ref]).status === 0;

  test("pushes ralph/<run> to RALPH_REMOTE after an iteration, once it holds work beyond the pod's start; other events and no work push nothing", () => {
    const { clone, remote, base } = setup();
    const env = { RALPH_REMOTE: remote, RALPH_POD_BASE: base };
    assert.equal(push(clone, { type: "iteration_ended", run: "US-1" }, env).status, 0);
    assert.equal(remoteHas(remote, "refs/heads/ralph/US-1"), false, "nothing beyond the start: nothing pushed");
    git(clone, "commit", "-q", "--allow-empty", "-m", "work");
    git(clone, "branch", "-f", "ralph/US-1", "HEAD");
    assert.equal(push(clone, { type: "needs_human", run: "US-1" }, env).status, 0);
    assert.equal(remoteHas(remote, "refs/heads/ralph/US-1"), false, "not an event that pushes");
    const pushed = push(clone, { type: "run_ended", run: "US-1", reason: "DONE" }, env);
    assert.equal(pushed.status, 0, pushed.stderr);
    assert.equal(git(remote, "rev-parse", "refs/heads/ralph/US-1"), git(clone, "rev-parse", "ralph/US-1"));
  });

  test("refuses a run id that is not one (no ref outside ralph/ is pushed), and ignores the clone's own remote URL", () => {
    const { clone, remote, base } = setup();
    const refused = push(clone, { type: "run_ended", run: "../main" }, { RALPH_REMOTE: remote, RALPH_POD_BASE: base });
    assert.equal(refused.status, 2);
    assert.match(refused.stderr, /expected a run id/);
    git(clone, "commit", "-q", "--allow-empty", "-m", "work");
    git(clone, "branch", "-f", "ralph/US-1", "HEAD");
    // What an agent could write into the clone's config: origin pointing elsewhere.
    const elsewhere = `${clone}-elsewhere.git`;
    git(clone, "init", "-q", "--bare", elsewhere);
    git(clone, "remote", "add", "origin", elsewhere);
    assert.equal(
      push(clone, { type: "run_ended", run: "US-1" }, { RALPH_REMOTE: remote, RALPH_POD_BASE: base }).status,
      0,
    );
    assert.equal(remoteHas(remote, "refs/heads/ralph/US-1"), true);
    assert.equal(remoteHas(elsewhere, "refs/heads/ralph/US-1"), false);
    // Without RALPH_REMOTE nothing is pushed (the clone's origin is the agent's to change).
    const unset = push(clone, { type: "run_ended", run: "US-1" }, { RALPH_REMOTE: "", RALPH_POD_BASE: base });
    assert.equal(unset.status, 2);
    assert.match(unset.stderr, /^push-branch: RALPH_REMOTE is not set/);
    assert.equal(remoteHas(elsewhere, "refs/heads/ralph/US-1"), false);
  });

  test("runs none of the clone's git config: url.insteadOf to ext::, protocol.ext.allow, receivepack (plain git push runs them)", () => {
    const { clone, remote, base } = setup();
    git(clone, "commit", "-q", "--allow-empty", "-m", "work");
    git(clone, "branch", "-f", "ralph/US-1", "HEAD");
    const mark = `${clone}-pwned`;
    const program = `${clone}-evil.sh`;
    writeFileSync(program, `#!/bin/sh\necho ran >> "${mark}"\nexit 1\n`, { mode: 0o755 });
    git(clone, "config", "protocol.allow", "always");
    git(clone, "config", "protocol.ext.allow", "always");
    git(clone, "config", `url.ext::${program} #.insteadOf`, remote);
    git(clone, "config", "remote.origin.receivepack", program);
    git(clone, "config", "core.sshCommand", program);
    const pushed = push(clone, { type: "run_ended", run: "US-1" }, { RALPH_REMOTE: remote, RALPH_POD_BASE: base });
    assert.equal(pushed.status, 0, pushed.stderr);
    assert.equal(existsSync(mark), false, "the agent's program did not run");
    assert.equal(git(remote, "rev-parse", "refs/heads/ralph/US-1"), git(clone, "rev-parse", "ralph/US-1"));
    // Control: a plain git push to the same URL from the clone runs it.
    assert.throws(() => git(clone, "push", "-q", remote, "ralph/US-1:refs/heads/control"));
    assert.match(readFileSync(mark, "utf8"), /ran/);
  });
});

describe("pod-start.sh, the image's entry point", () => {
  test("clones RALPH_REMOTE, fetches the task branches, and execs ralph with the pod's options before the Job's", () => {
    const seed = tempRepo();
    git(seed, "branch", "ralph/US-9");
    const remote = `${seed}-remote.git`;
    git(seed, "clone", "-q", "--bare", seed, remote);
    const workspace = `${seed}-workspace`;
    const bin = `${seed}-bin`;
    mkdirSync(workspace);
    mkdirSync(bin);
    // A stand-in ralph that reports what it was started with, where, and with which environment.
    const report = join(workspace, "ralph.json");
    const seeing = `require("fs").writeFileSync(${JSON.stringify(report)}, JSON.stringify({ argv: process.argv.slice(2), cwd: process.cwd(), base: process.env.RALPH_POD_BASE, helper: process.env.GIT_CONFIG_VALUE_0 ?? null }));\n`;
    writeFileSync(join(bin, "ralph.cjs"), seeing);
    writeFileSync(join(bin, "ralph"), `#!/bin/sh\nexec '${process.execPath}' '${join(bin, "ralph.cjs")}' "$@"\n`, {
      mode: 0o755,
    });
    const env = {
      PATH: `${bin}:${process.env.PATH ?? ""}`,
      HOME: workspace,
      GIT_CONFIG_GLOBAL: process.env.GIT_CONFIG_GLOBAL ?? "",
      GIT_CONFIG_NOSYSTEM: "1",
    };
    const started = spawnSync(
      "sh",
      [join(KUBERNETES_DIR, "pod-start.sh"), "--tasks", "prd.json", "--", "agent", "a b"],
      {
        encoding: "utf8",
        env: {
          ...env,
          RALPH_REMOTE: remote,
          RALPH_WORKSPACE: workspace,
          RALPH_WEBHOOK_URL: "https://hooks.example.test/x",
          GIT_TOKEN: "t0ken",
        },
      },
    );
    assert.equal(started.status, 0, started.stderr);
    const seen = JSON.parse(readFileSync(report, "utf8")) as {
      argv: string[];
      cwd: string;
      base: string;
      helper: string | null;
    };
    assert.deepEqual(seen.argv, [
      "run",
      "--task-index",
      "job",
      "--worktree",
      "--notify",
      `node ${KUBERNETES_DIR.replace(/\/$/, "")}/push-branch.mjs`,
      "--notify-events",
      "iteration_ended,run_ended,needs_human,waiting_limit,stalled",
      "--webhook",
      "https://hooks.example.test/x",
      "--tasks",
      "prd.json",
      "--",
      "agent",
      "a b",
    ]);
    assert.equal(seen.cwd, join(workspace, "repo"));
    assert.equal(seen.base, git(seed, "rev-parse", "HEAD"));
    assert.equal(
      git(join(workspace, "repo"), "rev-parse", "ralph/US-9"),
      git(seed, "rev-parse", "ralph/US-9"),
      "the task branches are local branches",
    );
    // The token reaches git through a credential helper, never written to a file.
    assert.match(seen.helper ?? "", /password=\$GIT_TOKEN/);
    const filled = spawnSync("git", ["credential", "fill"], {
      input: "protocol=https\nhost=example.test\n\n",
      encoding: "utf8",
      env: {
        ...process.env,
        GIT_TOKEN: "t0ken",
        GIT_CONFIG_COUNT: "1",
        GIT_CONFIG_KEY_0: "credential.helper",
        GIT_CONFIG_VALUE_0: seen.helper ?? "",
      },
    });
    assert.match(filled.stdout, /^password=t0ken$/m);
    assert.equal(spawnSync("grep", ["-r", "t0ken", workspace]).status, 1, "the token is in no file of the workspace");
  });
});
