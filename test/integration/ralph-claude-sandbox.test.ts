// The real pinned Claude Code CLI inside `--sandbox`, offline against the fake Anthropic API on 127.0.0.1:
// the sandbox's proxy lets it reach its API host (the fake's, from ANTHROPIC_BASE_URL) and nothing else.
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { bashTurn, textTurn, writeTurn } from "../fixtures/fake-anthropic.js";
import { RalphClaudeLab } from "../fixtures/ralph-claude-lab.js";
import { cleanEnv, finishWithin, RALPH, readEvents, readStatus, startRalph } from "../helpers/cli.js";

const lab = new RalphClaudeLab();
after(() => lab.cleanup());

/** Why a sandbox cannot be built here, or null. */
function sandboxMissing(): string | null {
  if (process.platform !== "linux") return "Linux only";
  const result = spawnSync(process.execPath, [RALPH, "doctor", "--json"], {
    env: cleanEnv(),
    encoding: "utf8",
    timeout: 60_000,
  });
  const sandbox = (JSON.parse(result.stdout) as { sandbox?: { ok: boolean; why?: string } }).sandbox;
  return sandbox?.ok ? null : `no sandbox here: ${sandbox?.why ?? "?"}`;
}

describe(
  "ralph run --sandbox --agent claude with the real Claude Code CLI",
  { timeout: 120_000, skip: sandboxMissing() ?? false },
  () => {
    test("writes a file in the work directory, runs a Bash tool, reports cost; the Bash tool is walled in too", async () => {
      const c = await lab.newCase((dir) => [
        writeTurn(join(dir, "hello.txt"), "hello from a sandbox\n"),
        // The tool runs in the sandbox: its PID namespace shows no process of the host.
        bashTurn(`ls /proc | grep -c '^[0-9]' > procs.txt; echo ran > bash.txt`),
        textTurn("Done. <promise>DONE</promise>"),
      ]);
      const result = await lab.runRalph(c, [
        "--sandbox",
        "--completion-promise",
        "DONE",
        "Write hello.txt and run a command.",
      ]);
      assert.equal(result.code, 0, result.stdout + result.stderr);
      assert.equal(readFileSync(join(c.projectDir, "hello.txt"), "utf8"), "hello from a sandbox\n");
      assert.equal(readFileSync(join(c.projectDir, "bash.txt"), "utf8"), "ran\n");
      assert.ok(
        Number(readFileSync(join(c.projectDir, "procs.txt"), "utf8")) < 30,
        "only the sandbox's own processes are visible",
      );
      assert.equal(c.fake.remaining(), 0);
      const status = readStatus(c.runDir);
      assert.equal(status.exit_reason, "DONE");
      assert.ok(
        typeof status.cost_usd === "number" && status.cost_usd > 0,
        `cost reported: ${String(status.cost_usd)}`,
      );
      assert.match(result.stdout, /sandbox: bubblewrap .*network only to 127\.0\.0\.1:\d+/);
      assert.match(result.stdout, /credentials: claude gets ANTHROPIC_API_KEY: metered API billing/);
      assert.deepEqual(
        readEvents(c.runDir).filter((event) => event.type === "sandbox_denied"),
        [],
      );
    });
  },
);

describe("a Claude Code reviewer in a --sandbox run", { timeout: 120_000, skip: sandboxMissing() ?? false }, () => {
  test("it reaches its API through the sandbox, cannot write the tree (its Bash tool gets a read-only file system), and its approval counts", async () => {
    const c = await lab.newCase(() => [
      bashTurn("echo x > reviewer-was-here.txt"),
      textTurn("The change is right.\n<verdict>approve</verdict>"),
    ]);
    writeFileSync(join(c.projectDir, "ralph.yaml"), "completion_criteria:\n  - type: review\n    agent: claude\n");
    // The agent is a plain command (it has no API host of its own): only the reviewer's host is let through.
    const worker = ["--", "sh", "-c", "cat > /dev/null; echo work > work.txt; echo '<promise>DONE</promise>'"];
    const started = startRalph(
      ["run", "--sandbox", "--name", c.runId, "-n", "1", "--completion-promise", "DONE", "work", ...worker],
      c.projectDir,
      c.env,
    );
    const result = await finishWithin(started, 60_000);
    assert.equal(result.code, 0, result.stdout + result.stderr);
    assert.equal(existsSync(join(c.projectDir, "reviewer-was-here.txt")), false);
    assert.equal(readFileSync(join(c.projectDir, "work.txt"), "utf8"), "work\n");
    assert.match(JSON.stringify(c.fake.mainRequests()[1]?.body ?? ""), /Read-only file system/);
    assert.deepEqual(
      readEvents(c.runDir)
        .filter((event) => event.type === "review_verdict")
        .map((event) => event.verdict),
      ["approve"],
    );
    assert.match(result.stdout, /sandbox: bubblewrap .*network only to 127\.0\.0\.1:\d+/);
  });
});
