// The preflight before iteration 1: a missing agent program, an unwritable work directory or a check's missing
// program is a usage error (exit 2) that says how to fix it, and no run directory is created. Past the
// preflight, a missing agent CLI is explained by the run, status and doctor.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { chmodSync, existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cleanEnv, FAKE_AGENT, RALPH, readStatus, runRalph, tempProjects } from "../helpers/cli.js";

const project = tempProjects("ralph-preflight-");
const noRalphDir = (dir: string) => assert.equal(existsSync(join(dir, ".ralph")), false, "nothing was created");
const oneLine = (stderr: string) => assert.equal(stderr.trimEnd().split("\n").length, 1, stderr);

describe("preflight", () => {
  test("the claude agent's program not found: exit 2, an install hint and --agent demo, no run directory", async () => {
    const dir = project();
    const missing = join(dir, "no-claude-here");
    const result = await runRalph(["run", "--name", "p", "work"], dir, cleanEnv({ RALPH_CLAUDE_BIN: missing }));
    assert.equal(result.code, 2, result.stderr);
    oneLine(result.stderr);
    assert.match(
      result.stderr,
      new RegExp(
        `preflight: the claude agent's program ${missing} was not found; install it \\(npm install -g @anthropic-ai/claude-code, or name it with RALPH_CLAUDE_BIN\\); or try ralph with --agent demo`,
      ),
    );
    noRalphDir(dir);
  });

  test("a command agent that is not there, and a check whose program is not on PATH: exit 2 naming it, nothing created", async () => {
    const dir = project();
    const agent = await runRalph(["run", "--name", "p", "work", "--", "./no-such-agent"], dir);
    assert.equal(agent.code, 2, agent.stderr);
    assert.match(agent.stderr, /the command agent's program \.\/no-such-agent was not found/);
    const check = await runRalph(
      ["run", "--name", "p", "--check", "no-such-test-runner --all", "work", "--", process.execPath, FAKE_AGENT],
      dir,
    );
    assert.equal(check.code, 2, check.stderr);
    oneLine(check.stderr);
    assert.match(
      check.stderr,
      /preflight: check "no-such-test-runner --all" runs no-such-test-runner, which is not on PATH/,
    );
    noRalphDir(dir);
  });

  test("a work directory the user cannot write: exit 2, nothing created", async (t) => {
    const dir = project();
    chmodSync(dir, 0o755);
    try {
      execFileSync("setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", process.execPath, "-e", "0"]);
    } catch {
      t.skip("setpriv to another user is not possible here");
      return;
    }
    let code = 0;
    let stderr = "";
    try {
      execFileSync(
        "setpriv",
        [
          "--reuid=65534",
          "--regid=65534",
          "--clear-groups",
          "--",
          process.execPath,
          RALPH,
          "run",
          "--name",
          "p",
          "work",
          "--",
          "sh",
          "-c",
          "true",
        ],
        { cwd: dir, env: cleanEnv({ HOME: dir }), stdio: ["ignore", "pipe", "pipe"] },
      );
    } catch (error) {
      code = (error as { status: number }).status;
      stderr = String((error as { stderr: Buffer }).stderr);
    }
    if (/Cannot find module|EACCES.*main\.js/.test(stderr)) {
      t.skip("ralph's own files are not readable by another user here");
      return;
    }
    assert.equal(code, 2, stderr);
    assert.match(stderr, /preflight: the work directory .* is not writable/);
    noRalphDir(dir);
  });

  test("control: --preflight off (or preflight: off in ralph.yaml) starts the run, which then fails as before", async () => {
    const dir = project();
    const off = await runRalph(["run", "--name", "p", "--preflight", "off", "work", "--", "./no-such-agent"], dir);
    assert.equal(off.code, 1, off.stderr);
    assert.equal(readStatus(join(dir, ".ralph", "runs", "p")).exit_reason, "FAILED");
    const other = project();
    writeFileSync(join(other, "ralph.yaml"), "preflight: off\n");
    const yaml = await runRalph(["run", "--name", "p", "work", "--", "./no-such-agent"], other);
    assert.equal(yaml.code, 1, yaml.stderr);
  });

  test("control: everything found (agent on PATH, a check's program on PATH, a shell builtin first) passes the preflight", async () => {
    const dir = project();
    const result = await runRalph(
      [
        "run",
        "--name",
        "p",
        "-n",
        "1",
        "--check",
        "sh -c 'exit 0'",
        "--check",
        "test -d .",
        "work",
        "--",
        "sh",
        "-c",
        "cat >/dev/null; echo ok",
      ],
      dir,
    );
    assert.equal(result.code, 0, result.stderr);
  });
});

test("a missing agent CLI: how to install it and --agent demo, no ralph logs --iteration hint; doctor fails naming the ralph.yaml", async () => {
  const dir = project();
  const env = cleanEnv({ PATH: "/usr/bin:/bin" });
  delete env.RALPH_CODEX_BIN;
  // The preflight refuses a missing agent before anything is made (its own test); this is the run past it.
  const result = await runRalph(
    ["run", "-n", "1", "--name", "m", "--agent", "codex", "--preflight", "off", "go"],
    dir,
    env,
  );
  assert.equal(result.code, 1, result.stderr);
  assert.match(
    result.stdout,
    /^next: codex is not installed here: install it with npm install -g @openai\/codex .*ralph run --agent demo/m,
  );
  assert.doesNotMatch(result.stdout, /--iteration/);
  const status = await runRalph(["status", "m"], dir, env);
  assert.match(status.stdout, /^next {7}codex is not installed here/m);
  writeFileSync(join(dir, "ralph.yaml"), "max_iterations: 2\nagent: codex\n");
  const doctor = await runRalph(["doctor"], dir, env);
  assert.equal(doctor.code, 1, doctor.stdout);
  assert.match(
    doctor.stdout,
    /^PROBLEM {6}.*ralph\.yaml \(line 2\) asks for agent codex, which is not installed here: install it with npm install -g @openai\/codex/m,
  );
  const json = JSON.parse((await runRalph(["doctor", "--json"], dir, env)).stdout) as {
    configured_agent: { agent: string; found: boolean };
  };
  assert.deepEqual([json.configured_agent.agent, json.configured_agent.found], ["codex", false]);
  // Known-false control: an agent that is there (the demo needs nothing) passes.
  writeFileSync(join(dir, "ralph.yaml"), "agent: demo\n");
  assert.equal((await runRalph(["doctor"], dir, env)).code, 0);
});
