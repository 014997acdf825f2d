// `ralph run` is sandboxed by default (SPEC section 15: `sandbox: auto`): with bubblewrap, one start line
// says so and `--no-sandbox` leaves it; without, one line says why and the run goes on unsandboxed. The
// demo still runs to DONE, an agent script under /tmp (hidden by the private /tmp otherwise) still runs,
// and refused connections end the run with the `sandbox.network.allow` line to add.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after } from "node:test";
import { cleanEnv, RALPH } from "../helpers/cli.js";
import { within } from "../helpers/wait.js";
import { cleanupAfterTests } from "../fixtures/e2e-cleanup.js";
import { probeSandbox } from "../../src/sandbox/sandbox-probe.js";

const cleanup = cleanupAfterTests();
const probe = probeSandbox(process.env);
// Nothing chooses: no flag, no RALPH_SANDBOX, no ralph.yaml.
// IS_SANDBOX is what the agent is told inside the sandbox only: it must not come from outside here.
function defaultEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = cleanEnv({ RALPH_SANDBOX: "", ...extra });
  delete env.IS_SANDBOX;
  return env;
}

// An agent program outside the work tree, under /tmp: it says whether it runs in ralph's sandbox.
const programDir = realpathSync(mkdtempSync("/tmp/ralph-default-agent-"));
const PROGRAM = join(programDir, "agent.sh");
writeFileSync(PROGRAM, '#!/bin/sh\necho "sandbox=${IS_SANDBOX:-no}" > where.txt\n', { mode: 0o755 });
after(() => rmSync(programDir, { recursive: true, force: true }));

async function run(args: string[], env: NodeJS.ProcessEnv) {
  const { dir } = cleanup.project("ralph-sandbox-default-");
  const ralph = cleanup.ralph(
    ["run", "--name", "x", "-n", "1", ...args, "--agent", "command", "go", "--", PROGRAM],
    dir,
    env,
  );
  const result = await within(ralph.done, 60_000, "ralph's exit");
  assert.equal(result.code, 3, result.stdout + result.stderr);
  return { result, where: readFileSync(join(dir, "where.txt"), "utf8").trim() };
}

describe(
  "the sandbox is on by default",
  { concurrency: 2, skip: probe.ok ? false : `no sandbox here: ${probe.why}` },
  () => {
    test("a plain ralph run is sandboxed, says so in one start line, and runs its agent script under /tmp", async () => {
      const { result, where } = await run([], defaultEnv());
      assert.equal(where, "sandbox=1");
      assert.equal(
        result.stdout
          .split("\n")
          .filter((line) => line.startsWith("sandbox (on by default; --no-sandbox runs without it): bubblewrap"))
          .length,
        1,
        result.stdout,
      );
    });

    test("--no-sandbox runs it without", async () => {
      const { result, where } = await run(["--no-sandbox"], defaultEnv());
      assert.equal(where, "sandbox=no");
      assert.doesNotMatch(result.stdout, /^sandbox/m);
    });

    test("the demo runs to DONE in the default sandbox", async () => {
      const { dir } = cleanup.project("ralph-sandbox-demo-");
      const demo = cleanup.ralph(["demo"], dir, defaultEnv({ RALPH_DEMO_DELAY_MS: "0" }));
      const result = await within(demo.done, 120_000, "the demo's exit");
      assert.equal(result.code, 0, result.stdout + result.stderr);
      assert.match(result.stdout, /^sandbox \(on by default/m);
    });

    test("refused connections end the run with the hosts and the sandbox.network.allow line to add", async () => {
      const { dir } = cleanup.project("ralph-sandbox-refused-");
      writeFileSync(join(dir, "ralph.yaml"), 'sandbox:\n  mode: auto\n  network:\n    allow: ["127.0.0.1:9"]\n');
      const script = `require("http").get({ host: "127.0.0.1", port: 3128, path: "http://blocked.example:8080/" }, (res) => { res.resume(); res.on("end", () => process.exit(0)); }).on("error", () => process.exit(0));`;
      const ralph = cleanup.ralph(
        ["run", "--name", "x", "-n", "1", "--agent", "command", "go", "--", process.execPath, "-e", script],
        dir,
        defaultEnv(),
      );
      const result = await within(ralph.done, 60_000, "ralph's exit");
      assert.match(
        result.stdout,
        /^sandbox: the agent was refused connections to blocked\.example:8080$/m,
        result.stdout,
      );
      assert.match(
        result.stdout,
        /^to allow them, in ralph\.yaml: sandbox: \{network: \{allow: \["127\.0\.0\.1:9", "blocked\.example:8080"\]\}\}$/m,
      );
    });
  },
);

describe("where no sandbox can be built", { concurrency: 2 }, () => {
  test("the run goes on unsandboxed after one line saying why and how to get it", async () => {
    // No bwrap on this PATH (the agent is given by its full path).
    const { result, where } = await run([], defaultEnv({ PATH: "/nonexistent" }));
    assert.equal(where, "sandbox=no");
    const lines = result.stderr.split("\n").filter((line) => /sandbox/.test(line));
    assert.equal(lines.length, 1, result.stderr);
    assert.match(
      lines[0] ?? "",
      /bwrap \(bubblewrap\) not found on PATH: install the bubblewrap package.*the agent runs without a sandbox/,
    );
  });

  test(
    "ralph doctor still says the sandbox works here (control for the simulation)",
    { skip: probe.ok ? false : "no sandbox here" },
    () => {
      const doctor = spawnSync(process.execPath, [RALPH, "doctor", "--json"], {
        env: defaultEnv(),
        encoding: "utf8",
        timeout: 60_000,
      });
      assert.equal((JSON.parse(doctor.stdout) as { sandbox: { ok: boolean } }).sandbox.ok, true);
    },
  );
});
