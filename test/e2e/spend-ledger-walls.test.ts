// The spend ledger is out of the agent's reach: ralph makes it 0700 (files 0600), and an agent under
// --sandbox cannot erase or forge what it holds. The same attack without the sandbox gets through (the
// known-false control), so the sandbox's walls, not the harness, stop it.
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { cleanEnv, RALPH, readStatus, runRalph, spendAgentEnv } from "../helpers/cli.js";
import { isolateGitConfig, tempRepo } from "../helpers/git-repo.js";

after(isolateGitConfig());

// The sandbox gives the agent a private /tmp: a ledger there would be out of its sight for that reason
// alone. The person's ledger is in their home directory; here it is beside the built tests, outside /tmp.
const states: string[] = [];
after(() => {
  for (const dir of states) rmSync(dir, { recursive: true, force: true });
});
function stateHome(): string {
  const dir = mkdtempSync(fileURLToPath(new URL("../../spend-state-", import.meta.url)));
  states.push(dir);
  return dir;
}

/** Why a sandbox cannot be built here (from `ralph doctor --json`), or null. */
function sandboxMissing(): string | null {
  const result = spawnSync(process.execPath, [RALPH, "doctor", "--json"], {
    env: cleanEnv(),
    encoding: "utf8",
    timeout: 60_000,
  });
  const sandbox = (JSON.parse(result.stdout) as { sandbox?: { ok: boolean; why?: string } }).sandbox;
  return sandbox?.ok ? null : `no sandbox here: ${sandbox?.why ?? "doctor says nothing"}`;
}

const mode = (path: string): number => statSync(path).mode & 0o777;

/** A run that spends $0.01, then a command agent that empties the day's ledger file and records whether it could. */
async function eraseAttempt(
  sandboxed: boolean,
): Promise<{ erased: string; spentAfter: unknown; ledger: string; stateDir: string }> {
  const repo = tempRepo();
  const state = stateHome();
  const env = spendAgentEnv(repo, { XDG_STATE_HOME: state });
  const paid = await runRalph(
    ["run", "--agent", "claude", "-n", "1", "--stall-limit", "0", "--name", "paid", "work"],
    repo,
    env,
  );
  assert.equal(paid.code, 3, paid.stdout + paid.stderr);
  const days = join(state, "ralph", "spend", "days");
  const [dayFile] = readdirSync(days);
  assert.ok(dayFile, "the paid run's call is in the ledger");
  const file = join(days, dayFile);
  // Empties the file, then appends a forged call of another project; says in the work tree whether both worked.
  const forged = JSON.stringify({
    v: 1,
    kind: "call",
    at: new Date().toISOString(),
    project: "/elsewhere",
    run: "forged",
    agent: "claude",
    cost_usd: 1000,
    cost_source: "reported",
  });
  // (In subshells: a failed redirection of the `:` builtin would end the script itself.)
  const script = `(: > "$1") && (printf '%s\\n' "$2" >> "$1") && echo erased > erased.txt || echo refused > erased.txt`;
  const attack = await runRalph(
    [
      "run",
      sandboxed ? "--sandbox" : "--no-sandbox",
      "-n",
      "1",
      "--stall-limit",
      "0",
      "--name",
      "attack",
      "go",
      "--",
      "/bin/sh",
      "-c",
      script,
      "agent",
      file,
      forged,
    ],
    repo,
    env,
  );
  assert.equal(attack.code, 3, attack.stdout + attack.stderr);
  const spent = await runRalph(["spend", "--json", "--all-projects", "--by", "run"], repo, env);
  assert.equal(spent.code, 0, spent.stderr);
  const report = JSON.parse(spent.stdout) as { total: { cost_usd: unknown } };
  return {
    erased: readFileSync(join(repo, "erased.txt"), "utf8").trim(),
    spentAfter: report.total.cost_usd,
    ledger: readFileSync(file, "utf8"),
    stateDir: join(state, "ralph", "spend"),
  };
}

describe("the spend ledger against the agent", () => {
  test("ralph makes the ledger 0700 and its files 0600", async () => {
    const repo = tempRepo();
    const state = stateHome();
    const result = await runRalph(
      ["run", "--agent", "claude", "-n", "1", "--stall-limit", "0", "--name", "m", "work"],
      repo,
      spendAgentEnv(repo, { XDG_STATE_HOME: state }),
    );
    assert.equal(result.code, 3, result.stdout + result.stderr);
    const top = join(state, "ralph", "spend");
    assert.equal(mode(top).toString(8), "700");
    for (const sub of ["days", "runs"]) {
      assert.equal(mode(join(top, sub)).toString(8), "700", sub);
      for (const name of readdirSync(join(top, sub)))
        assert.equal(mode(join(top, sub, name)).toString(8), "600", `${sub}/${name}`);
    }
    assert.equal(readStatus(join(repo, ".ralph", "runs", "m")).cost_usd, 0.01);
  });

  const skip = process.platform !== "linux" ? "Linux only" : sandboxMissing();

  test("an agent under --sandbox cannot erase or forge the ledger", { skip: skip ?? false }, async () => {
    const seen = await eraseAttempt(true);
    assert.equal(seen.erased, "refused", "the ledger is read-only inside the sandbox");
    assert.equal(seen.spentAfter, 0.01, "the paid run's $0.01 is still counted");
    assert.doesNotMatch(seen.ledger, /forged/);
  });

  test("control: the same agent without the sandbox erases and forges it", async () => {
    const seen = await eraseAttempt(false);
    assert.equal(seen.erased, "erased");
    assert.equal(seen.spentAfter, 1000, "the paid run's call is gone and the forged one counts");
    assert.match(seen.ledger, /forged/);
  });
});
