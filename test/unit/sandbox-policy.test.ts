// The sandbox's settings, allowlist matching, environment and credentials line.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseSandbox, envPasses } from "../../src/sandbox/sandbox-policy.js";
import { hostAllowed } from "../../src/sandbox/egress-proxy.js";
import { allowedHosts } from "../../src/sandbox/sandbox.js";
import { credentialsLine } from "../../src/sandbox/billing.js";

describe("sandbox settings", () => {
  test("a mode word, a boolean, or a mapping whose mode defaults to on", () => {
    assert.deepEqual(parseSandbox("auto"), {
      ok: true,
      value: { mode: "auto", network: { kind: "default" }, readDeny: [], writeAllow: [], env: null },
    });
    assert.equal(
      parseSandbox(true).ok && parseSandbox(true).ok
        ? (parseSandbox(true) as { value: { mode: string } }).value.mode
        : null,
      "on",
    );
    const mapped = parseSandbox({
      network: { allow: ["api.example.com", "127.0.0.1:8080", "*.example.org:*"] },
      read_deny: ["~/secrets"],
      write_allow: ["~/.cache"],
      env: ["ANTHROPIC_API_KEY"],
    });
    assert.deepEqual(mapped, {
      ok: true,
      value: {
        mode: "on",
        network: { kind: "allow", hosts: ["api.example.com", "127.0.0.1:8080", "*.example.org:*"] },
        readDeny: ["~/secrets"],
        writeAllow: ["~/.cache"],
        env: ["ANTHROPIC_API_KEY"],
      },
    });
    assert.deepEqual((parseSandbox({ network: "none" }) as { value: { network: unknown } }).value.network, {
      kind: "none",
    });
    assert.deepEqual(
      (parseSandbox({ network: "allow", allow: ["a.b"] }) as { value: { network: unknown } }).value.network,
      { kind: "allow", hosts: ["a.b"] },
    );
  });

  test("bad values name what was expected", () => {
    assert.equal(parseSandbox("maybe").ok, false);
    assert.match((parseSandbox({ netwrk: "none" }) as { expected: string }).expected, /not netwrk/);
    assert.match(
      (parseSandbox({ network: { allow: ["http://x"] } }) as { expected: string }).expected,
      /host\[:port\]/,
    );
    assert.match((parseSandbox({ env: [1] }) as { expected: string }).expected, /env/);
  });

  test("allowlist patterns: exact host, subdomains, ports (none given: 80 and 443)", () => {
    assert.equal(hostAllowed("api.example.com", 443, ["api.example.com"]), true);
    assert.equal(hostAllowed("api.example.com", 8443, ["api.example.com"]), false);
    assert.equal(hostAllowed("evil.com", 443, ["api.example.com"]), false);
    assert.equal(hostAllowed("api.example.com.evil.com", 443, ["api.example.com"]), false);
    assert.equal(hostAllowed("a.b.example.org", 9, ["*.example.org:*"]), true);
    assert.equal(hostAllowed("example.org", 443, ["*.example.org"]), false);
    assert.equal(hostAllowed("127.0.0.1", 8080, ["127.0.0.1:8080"]), true);
    assert.equal(hostAllowed("127.0.0.1", 8081, ["127.0.0.1:8080"]), false);
  });

  test("the default network is the agent's own API host, from its base URL when one is set", () => {
    const settings = {
      mode: "on" as const,
      network: { kind: "default" as const },
      readDeny: [],
      writeAllow: [],
      env: null,
    };
    assert.deepEqual(allowedHosts(settings, "claude", {}), ["api.anthropic.com:443"]);
    assert.deepEqual(allowedHosts(settings, "claude", { ANTHROPIC_BASE_URL: "http://127.0.0.1:4010" }), [
      "127.0.0.1:4010",
    ]);
    assert.deepEqual(allowedHosts(settings, "codex", {}), ["api.openai.com:443"]);
    assert.deepEqual(allowedHosts(settings, "command", {}), []);
  });

  test("sandbox.env: names and prefixes pass, null passes all", () => {
    assert.equal(envPasses("ANTHROPIC_API_KEY", null), true);
    assert.equal(envPasses("ANTHROPIC_API_KEY", ["PATH"]), false);
    assert.equal(envPasses("LC_ALL", ["LC_*"]), true);
  });

  test("the credentials line names the variable, never its value", () => {
    const line = credentialsLine("claude", { ANTHROPIC_API_KEY: "sk-ant-secret" }) ?? "";
    assert.match(line, /ANTHROPIC_API_KEY: metered API billing/);
    assert.doesNotMatch(line, /sk-ant-secret/);
    assert.match(credentialsLine("claude", {}) ?? "", /no API key variable reaches claude/);
    assert.equal(credentialsLine("demo", { ANTHROPIC_API_KEY: "x" }), null);
  });

  test("the credentials line says which billing applies: API key, a subscription and its credit pool, or unknown", () => {
    const home = mkdtempSync(join(tmpdir(), "ralph-billing-"));
    try {
      assert.match(credentialsLine("claude", { HOME: home, ANTHROPIC_API_KEY: "k" }) ?? "", /metered API billing/);
      assert.match(
        credentialsLine("claude", { HOME: home, CLAUDE_CODE_OAUTH_TOKEN: "t" }) ?? "",
        /Claude subscription behind that OAuth token; claude -p draws on the subscription's separate credit pool/,
      );
      const none = credentialsLine("claude", { HOME: home }) ?? "";
      assert.match(none, /billing unknown to ralph/);
      mkdirSync(join(home, ".claude"));
      writeFileSync(join(home, ".claude", ".credentials.json"), "{}");
      const login = credentialsLine("claude", { HOME: home }) ?? "";
      assert.match(
        login,
        /claude\.ai login, a Claude subscription: claude -p draws on the subscription's separate credit pool for headless use, not metered API billing/,
      );
      assert.doesNotMatch(login, /unknown/);
      assert.match(
        credentialsLine("claude", { HOME: "/nowhere", CLAUDE_CONFIG_DIR: join(home, ".claude") }) ?? "",
        /claude\.ai login/,
      );
      assert.match(credentialsLine("codex", { HOME: home }) ?? "", /billing unknown to ralph/);
      assert.equal(
        credentialsLine("command", { ANTHROPIC_API_KEY: "x" }),
        "credentials: the command's own: billing unknown to ralph",
      );
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });
});
