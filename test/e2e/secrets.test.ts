// Credentials an agent prints never reach a file ralph writes or its stdout: values of secret-named
// variables (even split across two writes) and well-known key shapes are replaced by [REDACTED].
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cleanEnv, runRalph, tempProjects } from "../helpers/cli.js";

const project = tempProjects("ralph-secrets-");

const ANTHROPIC = "sk-ant-api03-Zx8Qv2Lm9Rt4Kp7Wn3Hy6Bc1Df5Gj0Ns";
const SERVICE = "svc7Hq2Mz9Lw4Xr8Tb3N"; // no known shape: only its variable name marks it as a secret
const SHAPES = [
  "ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8",
  "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz",
  "AKIAIOSFODNN7EXAMPLE",
  "AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q",
  "xoxb-123456789012-abcdefghijkl",
  "sk-proj-Qw3Er4Ty5Ui6Op7As8Df9Gh0Jk",
];
const BEARER = "eyJhbGciOiJIUzI1NiJ9.payload.signature0123";
const SHORT = "q7zq7z"; // shorter than the minimum: kept (and proves output reaches the files at all)
const SECRETS = [ANTHROPIC, SERVICE, ...SHAPES, BEARER];

// Halves short enough that neither looks like a key by itself.
const SPLITS = [ANTHROPIC.slice(0, 12), ANTHROPIC.slice(12), SERVICE.slice(0, 10), SERVICE.slice(10)] as const;

// What the agent prints reaches it through variables with harmless names, so that no secret is in
// ralph's own arguments (settings.json keeps those, as given, to continue the run).
const env = () =>
  cleanEnv({
    ANTHROPIC_API_KEY: ANTHROPIC,
    DEPLOY_SERVICE_TOKEN: SERVICE,
    GITHUB_TOKEN: SHORT,
    SAMPLE_SHAPES: `${SHAPES.join(" ")} Authorization: Bearer ${BEARER}`,
    PART_A: SPLITS[0],
    PART_B: SPLITS[1],
    PART_C: SPLITS[2],
    PART_D: SPLITS[3],
  });

// The agent prints every secret on stdout and stderr, and two of them split across two writes.
const SCRIPT = [
  'echo "key: $ANTHROPIC_API_KEY token: $DEPLOY_SERVICE_TOKEN short: $GITHUB_TOKEN"',
  'echo "$SAMPLE_SHAPES"',
  'echo "stderr: $ANTHROPIC_API_KEY $DEPLOY_SERVICE_TOKEN" >&2',
  `printf '%s' "$PART_A"; sleep 0.3; printf '%s split ' "$PART_B"; printf '%s' "$PART_C"; sleep 0.3; printf '%s split\\n' "$PART_D"`,
  "exit 1",
].join("; ");

/** Every file of the run directory, in its subdirectories too, by its path there. */
function filesOf(runDir: string, under = ""): Map<string, string> {
  const files = new Map<string, string>();
  for (const entry of readdirSync(join(runDir, under), { withFileTypes: true })) {
    const name = join(under, entry.name);
    if (entry.isDirectory()) for (const [inner, text] of filesOf(runDir, name)) files.set(inner, text);
    else files.set(name, readFileSync(join(runDir, name), "latin1"));
  }
  return files;
}

function assertClean(where: string, text: string): void {
  for (const secret of SECRETS) assert.ok(!text.includes(secret), `${where} holds ${secret}`);
  // Half a key is still a leak.
  for (const half of SPLITS) assert.ok(!text.includes(half), `${where} holds ${half}, half a split key`);
}

describe("secrets printed by an agent", () => {
  for (const mode of ["--json", "--live"]) {
    test(`are redacted in every run file and on stdout (${mode})`, async () => {
      const dir = project();
      // The task text reaches status.json and progress.txt.
      writeFileSync(join(dir, "tasks.md"), `- [ ] deploy with ${SHAPES[0] as string}\n`);
      const result = await runRalph(
        ["run", mode, "--name", "s", "-n", "1", "--tasks", "tasks.md", "x", "--", "sh", "-c", SCRIPT],
        dir,
        env(),
      );
      assert.equal(result.code, 3, result.stderr);
      assertClean("stdout", result.stdout);
      assertClean("stderr", result.stderr);
      const files = filesOf(join(dir, ".ralph", "runs", "s"));
      for (const name of ["events.jsonl", "iter-001.log", "run.log", "progress.txt", "status.json"])
        assert.ok(files.has(name), name);
      for (const [name, text] of files) assertClean(name, text);
      const log = files.get("iter-001.log") ?? "";
      assert.match(log, /key: \[REDACTED\] token: \[REDACTED\] short: q7zq7z/);
      assert.match(log, /stderr: \[REDACTED\] \[REDACTED\]/);
      assert.match(log, /\[REDACTED\] split \[REDACTED\] split/);
      assert.match(
        files.get("events.jsonl") ?? "",
        /short: q7zq7z/,
        "known-false control: the agent's output is recorded",
      );
      assert.match(files.get("status.json") ?? "", /deploy with \[REDACTED\]/);
      assert.match(result.stdout, mode === "--json" ? /\[REDACTED\] split/ : /key: \[REDACTED\]/);
    });
  }
});
