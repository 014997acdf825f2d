// Nothing the sandboxed agent writes runs later outside, and no secret ralph holds reaches it (SPEC section
// 15, round 2). Each attack runs in a real bubblewrap sandbox built by the run's Sandbox, in a real git
// repository and HOME; the known-false control runs the same shell outside the sandbox, where it succeeds.
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

const WEBHOOK = "https://hooks.example.com/services/T000/B000/planting-secret-4711";

/** A git repository with a run directory whose settings hold a webhook, and a HOME with no agent config yet. */
function scene(): { work: string; home: string; runDir: string } {
  // Not under /tmp, which the sandbox replaces with a private one: the agent must see this HOME as it is.
  const root = mkdtempSync(join(homedir(), ".ralph-planting-"));
  made.push(root);
  const work = join(root, "work");
  const home = join(root, "home");
  mkdirSync(home);
  mkdirSync(work);
  const git = spawnSync("git", ["init", "-q", work], { encoding: "utf8" });
  assert.equal(git.status, 0, git.stderr);
  // A repository as `git init` may leave it: no hooks directory, no info directory.
  rmSync(join(work, ".git", "hooks"), { recursive: true, force: true });
  rmSync(join(work, ".git", "info"), { recursive: true, force: true });
  const runDir = join(work, ".ralph", "runs", "x");
  mkdirSync(runDir, { recursive: true });
  writeFileSync(join(runDir, "settings.json"), JSON.stringify({ webhooks: [WEBHOOK] }));
  writeFileSync(join(runDir, "state.md"), "# state\n");
  writeFileSync(join(home, ".claude.json"), JSON.stringify({ numStartups: 1 }));
  return { work, home, runDir };
}

// Each line: NAME ok|refused. Paths are relative to the work tree and HOME.
const ATTACKS = `
try() { name=$1; shift; if ( "$@" ) >/dev/null 2>&1; then echo "$name ok"; else echo "$name refused"; fi; }
try agent_commit sh -c 'echo a > a.txt && git add a.txt && git -c user.name=a -c user.email=a@example.com commit -qm a'
try git_hook sh -c 'mkdir -p .git/hooks && printf "#!/bin/sh\\ntouch pwned\\n" > .git/hooks/pre-commit'
try git_info sh -c 'mkdir -p .git/info && echo "* filter=evil" > .git/info/attributes'
try git_alternates sh -c 'mkdir -p .git/objects/info && echo /tmp/evil > .git/objects/info/alternates'
try git_modules sh -c 'mkdir -p .git/modules/sub && echo "[core] fsmonitor = touch pwned" > .git/modules/sub/config'
try git_worktrees sh -c 'mkdir -p .git/worktrees/evil && echo /tmp > .git/worktrees/evil/commondir'
try git_config sh -c 'echo "[core] fsmonitor = touch pwned" >> .git/config'
try git_swap sh -c 'mv .git .git-away && mkdir .git'
try claude_settings sh -c 'mkdir -p "$HOME/.claude" && echo "{\\"hooks\\":{}}" > "$HOME/.claude/settings.json"'
try claude_hooks sh -c 'mkdir -p "$HOME/.claude/commands" && echo evil > "$HOME/.claude/commands/evil.md"'
try claude_json sh -c 'echo "{\\"mcpServers\\":{\\"evil\\":{\\"command\\":\\"touch\\"}}}" > "$HOME/.claude.json"'
try codex_config sh -c 'mkdir -p "$HOME/.codex" && echo "notify = [\\"touch\\", \\"pwned\\"]" > "$HOME/.codex/config.toml"'
try run_settings grep -q planting-secret "$RALPH_RUN_DIR/settings.json"
try run_state grep -q state "$RALPH_RUN_DIR/state.md"
try env_token sh -c 'test -n "$GITHUB_TOKEN$AWS_SECRET_ACCESS_KEY$RALPH_WEBHOOK_URL"'
try env_key sh -c 'test -n "$ANTHROPIC_API_KEY"'
try is_sandbox sh -c 'test "$IS_SANDBOX" = 1'
`;

const ENV = {
  GITHUB_TOKEN: "ghp_x",
  AWS_SECRET_ACCESS_KEY: "aws-x",
  RALPH_WEBHOOK_URL: WEBHOOK,
  ANTHROPIC_API_KEY: "sk-ant-x",
};

/** Runs the attacks as `agent` would be run, sandboxed or not; what got through. */
async function attack(
  sandboxed: boolean,
  agent: AgentName,
): Promise<{ found: Map<string, string>; work: string; home: string }> {
  const { work, home, runDir } = scene();
  const env: NodeJS.ProcessEnv = { ...process.env, ...ENV, HOME: home, RALPH_RUN_DIR: runDir, RALPH_RUN_ID: "x" };
  let argv = ["/bin/sh", "-c", ATTACKS];
  let inside = env;
  let sandbox: Sandbox | null = null;
  if (sandboxed && probe.ok) {
    sandbox = await Sandbox.open(
      probe,
      { ...NO_SANDBOX, mode: "on", network: { kind: "none" } },
      { agent, env, projectDir: work, workDir: work },
    );
    ({ argv, env: inside } = sandbox.wrap(argv, env));
  }
  const result = spawnSync(argv[0] as string, argv.slice(1), {
    cwd: work,
    env: inside,
    encoding: "utf8",
    timeout: 30_000,
  });
  await sandbox?.close();
  assert.equal(result.status, 0, result.stderr);
  return {
    found: new Map(
      result.stdout
        .trim()
        .split("\n")
        .map((line) => line.split(" ") as [string, string]),
    ),
    work,
    home,
  };
}

const GIT = ["git_hook", "git_info", "git_alternates", "git_modules", "git_worktrees", "git_config", "git_swap"];
const CLAUDE = ["claude_settings", "claude_hooks", "codex_config"];
const SECRETS = ["run_settings", "env_token"];

describe(
  "the sandbox against an agent planting code and reading secrets",
  { skip: probe.ok ? false : `no sandbox here: ${probe.why}` },
  () => {
    test("sandboxed claude: git's code paths, the CLI's settings and the run's secrets are out of reach", async () => {
      const { found, work, home } = await attack(true, "claude");
      for (const name of [...GIT, ...CLAUDE, ...SECRETS])
        assert.equal(found.get(name), "refused", `${name} got through: ${JSON.stringify([...found])}`);
      // What the agent is meant to have still works: its own commits, its own API key, the run's state, IS_SANDBOX for Claude Code.
      for (const name of ["agent_commit", "run_state", "env_key", "is_sandbox"])
        assert.equal(found.get(name), "ok", name);
      // The private copy of ~/.claude.json took the write; the person's file is as it was.
      assert.equal(found.get("claude_json"), "ok");
      assert.deepEqual(JSON.parse(readFileSync(join(home, ".claude.json"), "utf8")), { numStartups: 1 });
      assert.equal(
        readFileSync(join(home, ".claude", "settings.json"), "utf8"),
        "{}\n",
        "an empty placeholder, read-only inside",
      );
      assert.equal(existsSync(join(work, ".git", "hooks", "pre-commit")), false);
      assert.equal(existsSync(join(work, ".git", "modules", "sub")), false);
      // git still works on the repository after the placeholders were made.
      assert.equal(spawnSync("git", ["status", "--short"], { cwd: work, encoding: "utf8" }).status, 0);
    });

    test("sandboxed codex: its config.toml cannot be created", async () => {
      const { found, home } = await attack(true, "codex");
      assert.equal(found.get("codex_config"), "refused");
      assert.equal(readFileSync(join(home, ".codex", "config.toml"), "utf8"), "");
    });

    test("control without the sandbox: every attack gets through", async () => {
      const { found, work, home } = await attack(false, "claude");
      assert.match(readFileSync(join(home, ".claude.json"), "utf8"), /mcpServers/);
      for (const name of [...GIT, ...CLAUDE, ...SECRETS, "claude_json"])
        assert.equal(found.get(name), "ok", `${name} failed outside: ${JSON.stringify([...found])}`);
      assert.equal(existsSync(join(work, ".git-away")), true);
    });
  },
);
