// Fallback agents: a usage limit resetting later than --max-wait moves the next iteration to the next free agent.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { chooseAfterLimit, pickAgent } from "../../src/engine/agent-choice.js";
import type { Input, Machine, Phase, Step } from "../../src/engine/phase.js";
import { statusOf } from "../../src/engine/status-of.js";
import { step } from "../../src/engine/step.js";
import { ATTEMPT, finished, machine } from "../fixtures/engine-machine.js";

const running: Phase = { id: "running", attempt: ATTEMPT, resultSeen: false };
const withChain = (maxWaitMs: number, tally: Partial<Machine["tally"]> = {}): Machine => {
  const base = machine(running, {}, { iteration: 2, ...tally });
  return { ...base, config: { ...base.config, agents: ["claude", "codex", "gemini"], maxWaitMs } };
};
const limitAt = (resetAtMs: number | null, nowMs = 1000): Input => ({
  type: "limitHit",
  run: finished(null),
  limit: { message: "429", resetAt: resetAtMs === null ? null : new Date(resetAtMs) },
  nowMs,
});
const events = (result: Step) =>
  result.effects
    .flatMap((effect) => (effect.kind === "record" ? effect.entries : []))
    .flatMap((entry) => (entry.kind === "event" ? [entry.body] : []));
const logs = (result: Step) =>
  result.effects
    .flatMap((effect) => (effect.kind === "record" ? effect.entries : []))
    .flatMap((entry) => (entry.kind === "log" ? [entry.line] : []));
const clear = (nowMs: number): Input => ({ type: "sentinel", stop: false, stopNow: false, pause: false, nowMs });

describe("fallback agents in the engine", () => {
  test("a limit resetting later than --max-wait: the same iteration runs again at once with the next agent", () => {
    const hit = step(withChain(60_000), limitAt(1000 + 3_600_000));
    assert.equal(hit.machine.phase.id, "boundary");
    assert.deepEqual(
      events(hit).map((e) => e.type),
      ["iteration_ended"],
    );
    assert.match(
      logs(hit).join("\n"),
      /usage limit of claude reached .* later than --max-wait: iteration 2 runs again with codex/,
    );
    assert.equal(hit.machine.tally.limitedUntil.claude, 1000 + 3_600_000);
    const next = step(hit.machine, clear(2000));
    const started = events(next).find((e) => e.type === "iteration_started");
    assert.deepEqual(started && [started.iteration, "agent" in started ? started.agent : null], [2, "codex"]);
    assert.deepEqual(
      next.effects.find((e) => e.kind === "spawn"),
      { kind: "spawn", attempt: { ...ATTEMPT, agent: "codex" } },
    );
  });

  test("a limit resetting within --max-wait is waited out, fallbacks or not", () => {
    const hit = step(withChain(600_000), limitAt(61_000));
    assert.equal(hit.machine.phase.id, "waitingLimit");
    assert.deepEqual(hit.effects.at(-1), { kind: "sleep", untilMs: 61_000 });
  });

  test("a limit with no reset time counts as later than any --max-wait", () => {
    const hit = step(withChain(24 * 3_600_000), limitAt(null));
    assert.equal(hit.machine.phase.id, "boundary");
  });

  test("without fallbacks the old wait stands", () => {
    const hit = step(machine(running, {}, { iteration: 2 }), limitAt(1000 + 3_600_000));
    assert.equal(hit.machine.phase.id, "waitingLimit");
  });

  test("every agent held back: wait until the first is free, and that one runs", () => {
    const limitedUntil = { claude: 50_000, codex: 30_000 };
    const fromGemini = {
      ...withChain(0, { limitedUntil }),
      phase: { ...running, attempt: { ...ATTEMPT, agent: "gemini" as const } },
    };
    const hit = step(fromGemini, limitAt(90_000));
    assert.equal(hit.machine.phase.id, "waitingLimit");
    assert.deepEqual(hit.effects.at(-1), { kind: "sleep", untilMs: 30_000 });
    assert.equal(pickAgent(hit.machine.config, hit.machine.tally.limitedUntil, 30_000), "codex");
  });

  test("once the run's own agent is free again it runs the next iteration", () => {
    const config = withChain(0).config;
    assert.equal(pickAgent(config, { claude: 10_000 }, 9_999), "codex");
    assert.equal(pickAgent(config, { claude: 10_000 }, 10_000), "claude");
    assert.equal(pickAgent(config, { claude: 10_000, codex: 5_000, gemini: 7_000 }, 1_000), "codex");
    assert.deepEqual(chooseAfterLimit(config, { claude: 10_000, codex: 20_000 }, 10_000, 0), {
      kind: "switch",
      to: "gemini",
    });
  });

  test("status.json names the fallback while its iteration runs, and the run's own agent between iterations", () => {
    const onFallback = withChain(0);
    const fallback: Machine = {
      ...onFallback,
      phase: { id: "running", attempt: { ...ATTEMPT, agent: "codex" }, resultSeen: false },
    };
    assert.equal(statusOf(fallback).agent, "codex");
    assert.equal(statusOf({ ...onFallback, phase: { id: "boundary" } }).agent, "claude");
  });
});
