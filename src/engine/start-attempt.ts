// Starts one iteration's agent (or, with --dry-run, pretends to): invocation, environment, output events.
import { agentEnvironment, redactArgv } from "../agents/env-scrub.js";
import type { TreeMarker } from "../process/inventory.js";
import type { RunRecord } from "../run/run-record.js";
import type { EngineOptions } from "./run-engine.js";
import type { EngineIo } from "./engine-io.js";
import type { AgentRun, Attempt, EndedBy } from "./phase.js";
import { startAgent, type AgentHandle } from "./run-agent.js";

/** Longest agent text kept in one event; the full output is in iter-NNN.log. */
const EVENT_TEXT_LIMIT = 4096;

/** What starting an attempt needs from the driver. */
export interface AttemptContext {
  options: EngineOptions;
  io: EngineIo;
  record: RunRecord;
  marker: TreeMarker;
  /** The task list state.md names, resolved (the demo agent reads it). */
  tasksFile: string | null;
  /** The run's spend so far (for agents that take a budget). */
  spentUsd: number;
  /** Called when the agent's output shows its final result. */
  onResult: () => void;
}

/** Starts the attempt's agent; `end` ends it (its whole tree), `done` settles once it is gone. */
export function startAttempt(attempt: Attempt, context: AttemptContext): AgentHandle {
  const { io, record, options, tasksFile } = context;
  const { settings, projectDir, runId } = options;
  const adapter = io.adapterFor(settings.agent);
  const remaining = settings.maxCostUsd === null ? undefined : Math.max(0, settings.maxCostUsd - context.spentUsd);
  const invocation = adapter.invocation({
    prompt: attempt.prompt,
    cwd: projectDir,
    env: io.env,
    scratchDir: record.paths.dir,
    ...(settings.model ? { model: settings.model } : {}),
    ...(remaining !== undefined ? { remainingBudgetUsd: remaining } : {}),
    ...(settings.agentCmd ? { commandArgv: settings.agentCmd } : {}),
    ...(tasksFile ? { tasksFile } : {}),
  });
  const { iteration } = attempt;
  if (settings.dryRun) {
    record.log(`dry run: would run ${JSON.stringify(redactArgv(invocation.argv))} with the prompt on ${invocation.stdin === null ? "no stdin" : "stdin"}`);
    return dryRun(io, settings.dryRunDelayMs);
  }
  return startAgent({
    adapter,
    invocation,
    prompt: attempt.prompt,
    cwd: projectDir,
    env: agentEnvironment(io.env, { ...invocation.env, RALPH_RUN_ID: runId, RALPH_RUN_DIR: record.paths.dir, RALPH_ITERATION: String(iteration) }),
    marker: context.marker,
    logFile: record.paths.iterationLog(iteration),
    timeoutMs: settings.timeoutMs,
    idleTimeoutMs: settings.idleTimeoutMs,
    graceMs: settings.graceMs,
    urgent: io.signals.urgent,
    onEvent: (event) => {
      const text = event.text && event.text.length > EVENT_TEXT_LIMIT ? `${event.text.slice(0, EVENT_TEXT_LIMIT)}…` : event.text;
      record.event({ type: "agent_event", iteration, ...event, ...(text !== undefined ? { text } : {}) });
      if (event.kind === "result") context.onResult();
    },
    spawnAgent: io.spawnAgent,
    now: () => io.now().getTime(),
  });
}

/** --dry-run: no agent; the iteration lasts the delay, or until it is ended. */
function dryRun(io: EngineIo, delayMs: number): AgentHandle {
  const startedAt = io.now().getTime();
  let finish: (endedBy: EndedBy | null) => void = () => undefined;
  const done = new Promise<AgentRun>((resolve) => {
    let settled = false;
    finish = (endedBy) => {
      if (settled) return;
      settled = true;
      cancel();
      const outcome = { finalMessage: null, sawResult: true };
      resolve({ kind: "finished", exit: { code: 0, signal: null }, outcome, endedBy, durationMs: io.now().getTime() - startedAt, leftovers: 0 });
    };
  });
  const cancel = io.setTimer(delayMs, () => finish(null));
  return { end: (why) => finish(why), done };
}
