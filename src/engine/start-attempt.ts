// Starts one iteration's agent (or, with --dry-run, pretends to): invocation, environment, output events.
import { basename } from "node:path";
import { agentEnvironment, redactArgv } from "../agents/env-scrub.js";
import { formatDuration } from "../util/parse-value.js";
import { AgentEventBatcher } from "../store/agent-event-batcher.js";
import { IterationLog } from "../store/iteration-log.js";
import { stderrMarksFile } from "../store/stderr-marks.js";
import type { LogAhead } from "../store/log-ahead.js";
import type { TreeMarker } from "../process/inventory.js";
import type { RunRecord } from "../run/run-record.js";
import { workDirOf, type EngineOptions } from "./engine-options.js";
import type { EngineIo } from "./engine-io.js";
import type { AgentRun, Attempt, EndedBy } from "./phase.js";
import { startAgent, type AgentHandle } from "./run-agent.js";
import { remainingBudgetUsd } from "../control/limit-rules.js";

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
  /** Where the iteration's log may already have been made. */
  logAhead?: LogAhead;
}

/** Starts the attempt's agent; `end` ends it (its whole tree), `done` settles once it is gone. */
export function startAttempt(attempt: Attempt, context: AttemptContext): AgentHandle {
  const { io, record, options, tasksFile } = context;
  const { settings, runId } = options;
  const workDir = workDirOf(options);
  const adapter = io.adapterFor(attempt.agent);
  // The model, extra arguments and command line are the run's own agent's; a fallback runs with its defaults.
  const own = attempt.agent === settings.agent;
  const remaining = remainingBudgetUsd(settings.maxCostUsd, context.spentUsd) ?? undefined;
  // Text for the adapters' argv and output parsers (lossy only there); the agent's stdin gets the bytes.
  const prompt = attempt.prompt.toString("utf8");
  const adapted = adapter.invocation({
    prompt,
    cwd: workDir,
    env: io.env,
    scratchDir: record.paths.dir,
    ...(own && settings.model ? { model: settings.model } : {}),
    ...(remaining !== undefined ? { remainingBudgetUsd: remaining } : {}),
    ...(own && settings.agentCmd ? { commandArgv: settings.agentCmd } : {}),
    ...(tasksFile ? { tasksFile } : {}),
    ...(own && settings.agentArgs?.length ? { agentArgs: settings.agentArgs } : {}),
  });
  const invocation = { ...adapted, stdin: adapted.stdin === prompt ? attempt.prompt : adapted.stdin };
  const { iteration } = attempt;
  if (settings.dryRun) {
    record.log(
      `dry run: would run ${JSON.stringify(redactArgv(invocation.argv))} with the prompt on ${invocation.stdin === null ? "no stdin" : "stdin"}`,
    );
    record.log(`dry run: the prompt (${prompt.length} characters):`);
    for (const line of prompt.replace(/\n$/, "").split("\n")) record.log(`  | ${line}`);
    return dryRun(io, settings.dryRunDelayMs);
  }
  const logFile = record.paths.iterationLog(iteration);
  const batcher = new AgentEventBatcher(
    (event) => record.event({ type: "agent_event", iteration, ...event }),
    (text) => record.redactor.text(text),
    basename(logFile),
  );
  const agent = startAgent({
    adapter,
    invocation,
    prompt,
    cwd: workDir,
    env: agentEnvironment(io.env, {
      ...invocation.env,
      RALPH_RUN_ID: runId,
      RALPH_RUN_DIR: record.paths.dir,
      RALPH_ITERATION: String(iteration),
    }),
    marker: context.marker,
    log: new IterationLog(
      context.logAhead?.take(logFile) ?? logFile,
      record.redactor,
      record.guard,
      stderrMarksFile(logFile),
    ),
    timeoutMs: settings.timeoutMs,
    idleTimeoutMs: settings.idleTimeoutMs,
    lingerMs: settings.lingerMs,
    onLingered: () => {
      record.log(
        `the agent was still running ${formatDuration(settings.lingerMs)} after its final result; ending it (the iteration counts by that result)`,
      );
      record.event({ type: "agent_lingered", iteration, agent: adapter.name, linger_ms: settings.lingerMs });
    },
    graceMs: settings.graceMs,
    urgent: io.signals.urgent,
    onEvent: (event) => {
      batcher.push(event);
      if (event.kind === "result") context.onResult();
    },
    onOutput: (bytes) => batcher.countOutput(bytes),
    spawnAgent: io.spawnAgent,
    now: () => io.now().getTime(),
  });
  return {
    end: agent.end,
    done: agent.done.finally(() => batcher.end()),
  };
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
      resolve({
        kind: "finished",
        exit: { code: 0, signal: null },
        outcome,
        endedBy,
        durationMs: io.now().getTime() - startedAt,
        leftovers: 0,
      });
    };
  });
  const cancel = io.setTimer(delayMs, () => finish(null));
  return { end: (why) => finish(why), done };
}
