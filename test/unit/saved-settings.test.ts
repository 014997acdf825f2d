// `ralph continue` reads settings.json through a schema: a value ralph run would never have written is refused.
import { test } from "node:test";
import assert from "node:assert/strict";
import { defaultSettings } from "../../src/config/run-options.js";
import { parseSavedSettings } from "../../src/config/saved-settings.js";

const FILE = ".ralph/runs/r/settings.json";

test("a file ralph run wrote reads back as the same settings", () => {
  const settings = {
    ...defaultSettings(),
    agent: "command" as const,
    agentCmd: ["sh", "-c", "true"],
    maxCostUsd: 2.5,
    checks: ["npm test"],
    lingerMs: 3000,
    fallbackAgents: ["codex" as const, "demo" as const],
    maxWaitMs: 60_000,
    notifyTargets: [
      {
        kind: "webhook" as const,
        url: "https://hooks.example.org/x?token=t",
        format: "slack" as const,
        events: ["run_ended" as const],
      },
      {
        kind: "command" as const,
        command: "./notify.sh 'a b' | tee -a notes.jsonl",
        events: ["stalled" as const, "needs_human" as const],
      },
      { kind: "desktop" as const, events: ["waiting_limit" as const] },
    ],
  };
  assert.deepEqual(parseSavedSettings(JSON.stringify(settings), FILE), { ok: true, settings });
});

test("a notification command saved as words by an older ralph is read back as the same shell line", () => {
  const parsed = parseSavedSettings(
    JSON.stringify({
      agent: "demo",
      notifyTargets: [{ kind: "command", argv: ["./notify.sh", "a b"], events: ["run_ended"] }],
    }),
    FILE,
  );
  assert.deepEqual(parsed.ok && parsed.settings.notifyTargets, [
    { kind: "command", command: "./notify.sh 'a b'", events: ["run_ended"] },
  ]);
});

test("settings missing from an older file take their defaults", () => {
  const parsed = parseSavedSettings(JSON.stringify({ agent: "demo", maxIterations: 7 }), FILE);
  assert.deepEqual(parsed, { ok: true, settings: { ...defaultSettings(), agent: "demo", maxIterations: 7 } });
});

test("a wrong value is refused with the file and the setting named", () => {
  for (const [value, field] of [
    [{ maxIterations: "3" }, "maxIterations"],
    [{ agent: "gpt" }, "agent"],
    [{ graceMs: -1 }, "graceMs"],
    [{ agentCmd: "sh -c true" }, "agentCmd"],
    [{ onLimit: "retry" }, "onLimit"],
    [{ fallbackAgents: ["command"] }, "fallbackAgents.0"],
    [
      { notifyTargets: [{ kind: "webhook", url: "ftp://x", format: "json", events: ["run_ended"] }] },
      "notifyTargets.0.url",
    ],
  ] as const) {
    const parsed = parseSavedSettings(JSON.stringify(value), FILE);
    assert.equal(parsed.ok, false, JSON.stringify(value));
    assert.match(parsed.ok ? "" : parsed.message, new RegExp(`^${FILE.replace(/\./g, "\\.")}: ${field}: `));
  }
});

test("a file that is not JSON, or not an object, is refused", () => {
  assert.deepEqual(parseSavedSettings("{", FILE), { ok: false, message: `${FILE}: is not valid JSON` });
  assert.equal(parseSavedSettings("[1]", FILE).ok, false);
  assert.equal(parseSavedSettings("null", FILE).ok, false);
});
