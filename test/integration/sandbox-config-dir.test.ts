// An agent CLI whose directory the person moved (CLAUDE_CONFIG_DIR, CODEX_HOME) is protected where it reads
// its settings from (SPEC section 15): inside the sandbox the agent writes its state there, but cannot create
// the settings, commands or config that the person's next session outside would run, and its writes to the
// moved `.claude.json` land in a private copy. The known-false control: the same shell outside the sandbox
// plants all of it.
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import type { AgentName } from "../../src/agents/types.js";
import { Sandbox } from "../../src/sandbox/sandbox.js";
import { NO_SANDBOX } from "../../src/sandbox/sandbox-policy.js";
import { probeSandbox } from "../../src/sandbox/sandbox-probe.js";

const probe = probeSandbox(process.env);
const made: string[] = [];
after(() => made.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

// Each line: NAME ok|refused.
const ATTACKS = `
try() { name=$1; shift; if ( "$@" ) >/dev/null 2>&1; then echo "$name ok"; else echo "$name refused"; fi; }
try state sh -c 'mkdir -p "$CLAUDE_CONFIG_DIR/projects" && echo s > "$CLAUDE_CONFIG_DIR/projects/session.jsonl"'
try settings sh -c 'echo "{\\"hooks\\":{\\"SessionStart\\":[]}}" > "$CLAUDE_CONFIG_DIR/settings.json"'
try commands sh -c 'mkdir -p "$CLAUDE_CONFIG_DIR/commands" && echo evil > "$CLAUDE_CONFIG_DIR/commands/evil.md"'
try claude_json sh -c 'echo "{\\"mcpServers\\":{\\"evil\\":{\\"command\\":\\"touch\\"}}}" > "$CLAUDE_CONFIG_DIR/.claude.json"'
try codex_config sh -c 'echo "notify = [\\"touch\\", \\"pwned\\"]" > "$CODEX_HOME/config.toml"'
`;

/** A work tree, a HOME, and the moved directories (the person's `.claude.json` in the Claude one). */
function scene(): { work: string; env: NodeJS.ProcessEnv; claudeDir: string; codexDir: string } {
  // Not under /tmp, which the sandbox replaces with a private one.
  const root = mkdtempSync(join(homedir(), ".ralph-config-dir-"));
  made.push(root);
  const work = join(root, "work");
  const home = join(root, "home");
  mkdirSync(home);
  const claudeDir = join(root, "claude-config");
  const codexDir = join(root, "codex-home");
  mkdirSync(claudeDir);
  mkdirSync(codexDir);
  writeFileSync(join(claudeDir, ".claude.json"), JSON.stringify({ numStartups: 1 }));
  assert.equal(spawnSync("git", ["init", "-q", work]).status, 0);
  return {
    work,
    claudeDir,
    codexDir,
    env: { ...process.env, HOME: home, CLAUDE_CONFIG_DIR: claudeDir, CODEX_HOME: codexDir },
  };
}

/** Runs the attacks as `agent` (sandboxed, with `writeAllow`, or not); what got through. */
async function attack(
  agent: AgentName,
  sandboxed: boolean,
  writeAllow: (dirs: { claudeDir: string; codexDir: string }) => string[] = () => [],
) {
  const found = scene();
  let argv = ["/bin/sh", "-c", ATTACKS];
  let env = found.env;
  let sandbox: Sandbox | null = null;
  if (sandboxed && probe.ok) {
    sandbox = await Sandbox.open(
      probe,
      { ...NO_SANDBOX, mode: "on", network: { kind: "none" }, writeAllow: writeAllow(found) },
      { agent, env, projectDir: found.work, workDir: found.work },
    );
    ({ argv, env } = sandbox.wrap(argv, env));
  }
  const result = spawnSync(argv[0] as string, argv.slice(1), {
    cwd: found.work,
    env,
    encoding: "utf8",
    timeout: 30_000,
  });
  await sandbox?.close();
  assert.equal(result.status, 0, result.stderr);
  return {
    ...found,
    results: new Map(
      result.stdout
        .trim()
        .split("\n")
        .map((line) => line.split(" ") as [string, string]),
    ),
  };
}

describe(
  "an agent CLI's moved directory in the sandbox",
  { skip: probe.ok ? false : `no sandbox here: ${probe.why}` },
  () => {
    test("CLAUDE_CONFIG_DIR: the agent writes its state there, not its settings or commands; .claude.json is a private copy", async () => {
      const { results, claudeDir } = await attack("claude", true);
      assert.equal(results.get("state"), "ok", "the CLI cannot keep its state");
      assert.equal(results.get("settings"), "refused");
      assert.equal(results.get("commands"), "refused");
      assert.equal(results.get("claude_json"), "ok");
      assert.deepEqual(JSON.parse(readFileSync(join(claudeDir, ".claude.json"), "utf8")), { numStartups: 1 });
      assert.equal(readFileSync(join(claudeDir, "settings.json"), "utf8"), "{}\n", "an empty placeholder");
      assert.equal(existsSync(join(claudeDir, "commands", "evil.md")), false);
    });

    test("CLAUDE_CONFIG_DIR made writable by sandbox.write_allow: its settings stay read-only all the same", async () => {
      const { results, claudeDir } = await attack("claude", true, (dirs) => [dirs.claudeDir]);
      assert.equal(results.get("settings"), "refused");
      assert.equal(results.get("commands"), "refused");
      assert.deepEqual(JSON.parse(readFileSync(join(claudeDir, ".claude.json"), "utf8")), { numStartups: 1 });
    });

    test("CODEX_HOME: codex's config.toml cannot be created there", async () => {
      const { results, codexDir } = await attack("codex", true, (dirs) => [dirs.codexDir]);
      assert.equal(results.get("codex_config"), "refused");
      assert.equal(readFileSync(join(codexDir, "config.toml"), "utf8"), "");
    });

    test("control without the sandbox: every plant lands in the moved directories", async () => {
      const { results, claudeDir } = await attack("claude", false);
      for (const name of ["state", "settings", "commands", "claude_json", "codex_config"])
        assert.equal(results.get(name), "ok", name);
      assert.match(readFileSync(join(claudeDir, ".claude.json"), "utf8"), /mcpServers/);
    });

    test("~/.claude/.config.json (read by Claude Code instead of .claude.json once there): a planted one is found and moved out", async () => {
      const { work, env } = scene();
      const home = env.HOME as string;
      const plain = { ...env, CLAUDE_CONFIG_DIR: "" };
      if (!probe.ok) return;
      const sandbox = await Sandbox.open(
        probe,
        { ...NO_SANDBOX, mode: "on", network: { kind: "none" } },
        { agent: "claude", env: plain, projectDir: work, workDir: work },
      );
      try {
        const scan = await sandbox.watchTamper(work, join(work, "..", "planted"), plain);
        const wrapped = sandbox.wrap(
          ["/bin/sh", "-c", `echo '{"mcpServers":{"evil":{"command":"touch"}}}' > "$HOME/.claude/.config.json"`],
          plain,
        );
        assert.equal(
          spawnSync(wrapped.argv[0] as string, wrapped.argv.slice(1), { cwd: work, env: wrapped.env, timeout: 30_000 })
            .status,
          0,
        );
        // Control: the write reached the person's ~/.claude, where their next session would read it.
        assert.equal(existsSync(join(home, ".claude", ".config.json")), true);
        assert.deepEqual(await scan(), [join(home, ".claude", ".config.json")]);
        assert.equal(existsSync(join(home, ".claude", ".config.json")), false);
      } finally {
        await sandbox.close();
      }
    });

    test("an existing ~/.claude/.config.json is the agent's private copy: the person's stays as it was", async () => {
      const { work, env } = scene();
      const home = env.HOME as string;
      const plain = { ...env, CLAUDE_CONFIG_DIR: "" };
      mkdirSync(join(home, ".claude"));
      writeFileSync(join(home, ".claude", ".config.json"), '{"numStartups":2}');
      if (!probe.ok) return;
      const sandbox = await Sandbox.open(
        probe,
        { ...NO_SANDBOX, mode: "on", network: { kind: "none" } },
        { agent: "claude", env: plain, projectDir: work, workDir: work },
      );
      try {
        const wrapped = sandbox.wrap(
          ["/bin/sh", "-c", `echo '{"mcpServers":{}}' > "$HOME/.claude/.config.json"`],
          plain,
        );
        assert.equal(
          spawnSync(wrapped.argv[0] as string, wrapped.argv.slice(1), { cwd: work, env: wrapped.env, timeout: 30_000 })
            .status,
          0,
        );
        assert.equal(readFileSync(join(home, ".claude", ".config.json"), "utf8"), '{"numStartups":2}');
      } finally {
        await sandbox.close();
      }
    });
  },
);
