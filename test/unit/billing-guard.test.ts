// A billing error (no credit left) is fatal: never waited out as a usage limit, unless --on-billing-error wait.
import { test } from "node:test";
import assert from "node:assert/strict";
import { classifyCodexError } from "../../src/agents/codex-parser.js";
import { isBillingFailure } from "../../src/agents/limit-detect.js";
import { limitOf } from "../../src/engine/iteration-facts.js";
import type { Phase } from "../../src/engine/phase.js";
import { step } from "../../src/engine/step.js";
import { ATTEMPT, finished, machine } from "../fixtures/engine-machine.js";

const NOW = new Date("2030-01-01T00:00:00Z");
const CODEX_QUOTA = "Quota exceeded. Check your plan and billing details.";

test("billing wording from each provider is a billing failure; a daily quota or a rate limit is not", () => {
  for (const text of [
    "Credit balance is too low",
    "Error: insufficient_quota",
    CODEX_QUOTA,
    "402 Payment Required",
    "You are out of credits",
  ])
    assert.ok(isBillingFailure(text), text);
  for (const text of [
    "You exceeded your current quota, please check your plan and billing details.",
    "rate limit reached, retry after 30s",
    "usage limit reached",
  ])
    assert.ok(!isBillingFailure(text), text);
});

test("a Codex quota-exceeded error, which reads like a usage limit, is no limit to wait for by default", () => {
  const failure = classifyCodexError(CODEX_QUOTA, NOW);
  assert.equal(failure.kind, "rate_limit");
  const outcome = { finalMessage: null, sawResult: false, error: { kind: failure.kind, message: failure.message } };
  assert.equal(limitOf(outcome, "fail"), null);
  assert.notEqual(limitOf(outcome, "wait"), null);
});

test("judging an iteration with a billing error: FAILED at once, explained, with a guard_fired event", () => {
  const run = finished(
    null,
    { exit: { code: 1, signal: null } },
    { sawResult: false, error: { kind: "rate_limit", message: CODEX_QUOTA } },
  );
  const judging: Phase = {
    id: "judging",
    attempt: ATTEMPT,
    run,
    claim: { found: false, reason: "absent" },
    failure: `rate_limit: ${CODEX_QUOTA}`,
    marked: [],
    tasksAfter: null,
  };
  const result = step(machine(judging, { config: { ...machine(judging).config, maxFailures: 10 } }), {
    type: "checked",
    verdicts: [],
    fingerprint: null,
  });
  assert.equal(result.machine.phase.id, "ended");
  assert.deepEqual(result.machine.phase.id === "ended" ? result.machine.phase.ending : null, {
    reason: "FAILED",
    detail: `billing error: ${CODEX_QUOTA}`,
  });
  const entries = result.effects.flatMap((effect) => (effect.kind === "record" ? effect.entries : []));
  assert.ok(entries.some((entry) => entry.kind === "event" && entry.body.type === "guard_fired"));
  assert.ok(entries.some((entry) => entry.kind === "log" && /add credit or change the plan/.test(entry.line)));
});

test("control: with --on-billing-error wait the same iteration is an ordinary failure, the run goes on", () => {
  const run = finished(
    null,
    { exit: { code: 1, signal: null } },
    { sawResult: false, error: { kind: "rate_limit", message: CODEX_QUOTA } },
  );
  const judging: Phase = {
    id: "judging",
    attempt: ATTEMPT,
    run,
    claim: { found: false, reason: "absent" },
    failure: `rate_limit: ${CODEX_QUOTA}`,
    marked: [],
    tasksAfter: null,
  };
  const from = machine(judging);
  const result = step(
    { ...from, config: { ...from.config, onBillingError: "wait", maxFailures: 10 } },
    { type: "checked", verdicts: [], fingerprint: null },
  );
  assert.equal(result.machine.phase.id, "boundary");
});
