// Which agent runs the next iteration: the run's own, or a fallback while the ones before it wait out usage limits.
import type { AgentName } from "../agents/types.js";
import type { EngineConfig, Tally } from "./phase.js";

/** The first agent of the chain not held back by a usage limit at `nowMs`; if all are, the one free soonest. */
export function pickAgent(config: EngineConfig, limitedUntil: Tally["limitedUntil"], nowMs: number): AgentName {
  const free = config.agents.find((agent) => (limitedUntil[agent] ?? 0) <= nowMs);
  if (free) return free;
  const soonest = [...config.agents].sort((a, b) => (limitedUntil[a] ?? 0) - (limitedUntil[b] ?? 0))[0];
  return soonest ?? (config.agents[0] as AgentName);
}

/** What to do after `agent` hit a usage limit: switch to another agent now, or wait until one is free. */
export type LimitChoice = { kind: "switch"; to: AgentName } | { kind: "wait"; untilMs: number };

/**
 * A limit resetting within --max-wait is waited out; one resetting later (or at a time nobody said) moves on to
 * the next agent that is free, if any. A wait lasts until the first held-back agent is free again.
 */
export function chooseAfterLimit(
  config: EngineConfig,
  limitedUntil: Tally["limitedUntil"],
  resetAtMs: number | null,
  nowMs: number,
): LimitChoice {
  const waitMs = resetAtMs === null ? Number.POSITIVE_INFINITY : resetAtMs - nowMs;
  const next = pickAgent(config, limitedUntil, nowMs);
  if (waitMs > config.maxWaitMs && (limitedUntil[next] ?? 0) <= nowMs) return { kind: "switch", to: next };
  const held = config.agents.map((agent) => limitedUntil[agent] ?? 0).filter((until) => until > nowMs);
  return { kind: "wait", untilMs: held.length > 0 ? Math.min(...held) : nowMs };
}
