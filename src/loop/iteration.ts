// One iteration: build the prompt, run the agent (or pretend to, with --dry-run), record, and decide.
import { basename } from "node:path";
import { agentEnvironment, redactArgv } from "../agents/env-scrub.js";
import type { AgentOutcome } from "../agents/types.js";
import { AgentEventBatcher } from "../store/agent-event-batcher.js";
import { IterationLog } from "../store/iteration-log.js";
import { buildPrompt } from "./build-prompt.js";
import { decideAfterIteration } from "./decide.js";
import type { Ending } from "./finish-run.js";
import type { LoopState } from "./loop-state.js";
import { runAgent, type AgentRun } from "./run-agent.js";

/** Runs the next iteration; returns an Ending when the run must end after it. */
export async function runIteration(loop: LoopState, task: string | null): Promise<Ending | null> {
  const { record, options, deps } = loop;
  const { settings } = options;
  const adapter = deps.adapterFor(settings.agent);
  const iteration = record.status.iteration + 1;
  const promptBytes = buildPrompt({ prompt: loop.state.prompt, task, failingChecks: loop.failingChecks });
  // Text for the adapters' argv and output parsers (lossy only there); the agent's stdin gets the bytes.
  const prompt = promptBytes.toString("utf8");
  const remaining = settings.maxCostUsd === null ? undefined : Math.max(0, settings.maxCostUsd - record.status.cost_usd);
  const adapted = adapter.invocation({
    prompt,
    cwd: options.projectDir,
    scratchDir: record.paths.dir,
    ...(settings.model ? { model: settings.model } : {}),
    ...(remaining !== undefined ? { remainingBudgetUsd: remaining } : {}),
    ...(settings.agentCmd ? { commandArgv: settings.agentCmd } : {}),
    ...(loop.tasksFile ? { tasksFile: loop.tasksFile } : {}),
    ...(settings.agentArgs?.length ? { agentArgs: settings.agentArgs } : {}),
  });
  const invocation = { ...adapted, stdin: adapted.stdin === prompt ? promptBytes : adapted.stdin };
  record.update({ iteration, state: "running", current_task: task, last_action: `iteration ${iteration} started` });
  record.event("iteration_started", { iteration, max_iterations: loop.state.maxIterations, task });
  const shownArgv = redactArgv(invocation.argv);

  let run: AgentRun;
  if (settings.dryRun) {
    record.log(`dry run: would run ${JSON.stringify(shownArgv)} with the prompt on ${invocation.stdin === null ? "no stdin" : "stdin"}`);
    record.log(`dry run: the prompt (${prompt.length} characters):`);
    for (const line of prompt.replace(/\n$/, "").split("\n")) record.log(`  | ${line}`);
    const startedAt = deps.now().getTime();
    await sleepUnless(settings.dryRunDelayMs, [deps.signals.interrupted, loop.control.stopNow]);
    const outcome: AgentOutcome = { finalMessage: null, sawResult: true };
    run = { kind: "finished", exit: { code: 0, signal: null }, outcome, endedBy: null, durationMs: deps.now().getTime() - startedAt, leftovers: 0 };
  } else {
    const env = agentEnvironment(deps.env, {
      ...invocation.env,
      RALPH_RUN_ID: options.runId,
      RALPH_RUN_DIR: record.paths.dir,
      RALPH_ITERATION: String(iteration),
    });
    const logFile = record.paths.iterationLog(iteration);
    const batcher = new AgentEventBatcher((event) => record.event("agent_event", { iteration, ...event }), (text) => record.redactor.text(text), basename(logFile));
    run = await runAgent({
      adapter,
      invocation,
      prompt,
      cwd: options.projectDir,
      env,
      marker: loop.marker,
      log: new IterationLog(logFile, record.redactor, record.guard),
      timeoutMs: settings.timeoutMs,
      idleTimeoutMs: settings.idleTimeoutMs,
      graceMs: settings.graceMs,
      interrupted: deps.signals.interrupted,
      urgent: deps.signals.urgent,
      stopNow: loop.control.stopNow,
      cannotRecord: record.guard.failed,
      onEvent: (event) => batcher.push(event),
      onOutput: (bytes) => batcher.countOutput(bytes),
      spawnAgent: deps.spawnAgent,
      now: () => deps.now().getTime(),
    });
    batcher.end();
  }
  loop.guardStateAfter(iteration);
  if (run.kind === "missing") {
    record.progress([["iteration", iteration], ["result", "agent_missing"], ["error", run.message]]);
    return { reason: "FAILED", detail: `agent could not be started: ${run.message}` };
  }
  return decideAfterIteration(loop, { iteration, task, prompt, run });
}

function sleepUnless(ms: number, signals: AbortSignal[]): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      for (const signal of signals) signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    for (const signal of signals) {
      if (signal.aborted) return done();
      signal.addEventListener("abort", done, { once: true });
    }
  });
}
