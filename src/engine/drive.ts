// The driver: feeds inputs to `step`, performs the effects it returns through EngineIo, and keeps
// status.json in line with the machine. All of the engine's I/O happens here.
import { randomBytes } from "node:crypto";
import { resolve } from "node:path";
import { agentEnvironment, redactArgv } from "../agents/env-scrub.js";
import type { RunSettings } from "../config/run-options.js";
import type { TreeMarker } from "../process/inventory.js";
import { finishRun, type Ending, type RunResult } from "../run/finish-run.js";
import { newStatus } from "../run/new-status.js";
import { RunRecord } from "../run/run-record.js";
import type { Plan } from "../store/plan-file.js";
import { runPaths } from "../store/run-paths.js";
import type { RunStatus } from "../store/status-file.js";
import type { EngineIo } from "./engine-io.js";
import { limitOf, newTally } from "./iteration-facts.js";
import type { AgentRun, Attempt, EndedBy, Effect, Input, Machine } from "./phase.js";
import { startAgent, type AgentHandle } from "./run-agent.js";
import { statusOf, type StatusPatch } from "./status-of.js";
import { step } from "./step.js";

/** What to run. */
export interface EngineOptions {
  projectDir: string;
  runId: string;
  settings: RunSettings;
  /** The plan written to state.md at the start (ignored when continuing: the file is re-read). */
  plan: Plan;
  /** The previous status when continuing a run (`ralph continue`), to keep its counters. */
  previous: RunStatus | null;
  /** Lines to log at the start (e.g. a stale lock that was taken over). */
  notes?: string[];
}

/** Longest agent text kept in one event; the full output is in iter-NNN.log. */
const EVENT_TEXT_LIMIT = 4096;

/** Runs the loop to its end and returns how it ended; never throws for expected failures. */
export async function runEngine(options: EngineOptions, io: EngineIo): Promise<RunResult> {
  const paths = runPaths(options.projectDir, options.runId);
  const { previous, settings } = options;
  const status = newStatus({
    runId: options.runId,
    mode: "run",
    cwd: options.projectDir,
    agent: settings.agent,
    host: io.host,
    now: io.now(),
    state: "starting",
    lastAction: "starting",
    maxIterations: options.plan.maxIterations,
    iteration: previous?.iteration,
    calls: previous?.calls,
    costUsd: previous?.cost_usd,
    tokens: previous?.tokens,
    sessionId: previous?.session_id,
    startedAt: previous?.started_at,
  });
  const record = RunRecord.create(paths, status, io.listener, io.now);
  // Every process of this run's agents carries this in its environment, so none can hide from the teardown.
  const marker = { key: "RALPH_SUPERVISOR", value: `${options.runId}:${io.host.pid}:${randomBytes(6).toString("hex")}` };
  const guardian = io.startGuardian?.(marker, settings.graceMs) ?? null;
  const driver = new Driver(options, io, record, marker);
  let ending: Ending;
  try {
    ending = await driver.run();
  } catch (error) {
    ending = { reason: "FAILED", detail: `internal error: ${(error as Error).message ?? String(error)}` };
    await driver.abandon();
  } finally {
    driver.close();
  }
  const result = finishRun(record, ending, io.now(), driver.status());
  guardian?.dispose();
  return result;
}

class Driver {
  private machine: Machine;
  private readonly queue: Input[] = [];
  private wake: (() => void) | null = null;
  private crash: { error: unknown } | null = null;
  private agent: AgentHandle | null = null;
  private checks: AbortController | null = null;
  private dryRunEnd: ((why: EndedBy) => void) | null = null;
  private readonly cancels: Array<() => void> = [];
  private lastStatus = "";

  constructor(
    private readonly options: EngineOptions,
    private readonly io: EngineIo,
    private readonly record: RunRecord,
    private readonly marker: TreeMarker,
  ) {
    const { settings, previous, plan } = options;
    this.machine = {
      phase: { id: "boundary" },
      plan,
      planProblem: null,
      tasks: null,
      config: {
        maxFailures: settings.maxFailures,
        stallLimit: settings.stallLimit,
        onLimit: settings.onLimit,
        maxRuntimeMs: settings.maxRuntimeMs,
        maxCostUsd: settings.maxCostUsd,
        dryRun: settings.dryRun,
      },
      tally: newTally(
        { iteration: previous?.iteration, calls: previous?.calls, costUsd: previous?.cost_usd, tokens: previous?.tokens, sessionId: previous?.session_id },
        io.now().getTime(),
      ),
    };
  }

  /** Steps the machine until it has ended; returns the ending. */
  async run(): Promise<Ending> {
    await this.begin();
    this.perform({ kind: "look", what: "all" });
    for (;;) {
      const input = await this.next();
      const { machine, effects } = step(this.machine, input);
      this.machine = machine;
      this.writeStatus();
      for (const effect of effects) this.perform(effect);
      if (machine.phase.id === "ended") return machine.phase.ending;
    }
  }

  /** After an internal error: end whatever still runs, and wait until it is gone. */
  async abandon(): Promise<void> {
    this.checks?.abort();
    const agent = this.agent;
    if (!agent) return;
    agent.end("interrupted");
    await agent.done.catch(() => undefined);
  }

  /** Stops watching and cancels every timer. */
  close(): void {
    for (const cancel of this.cancels.splice(0)) cancel();
  }

  private async begin(): Promise<void> {
    const { options, io, record } = this;
    const { previous } = options;
    if (!previous) io.writePlan(record.paths.state, options.plan);
    record.event({
      type: "run_started",
      agent: options.settings.agent,
      max_iterations: options.plan.maxIterations,
      cwd: options.projectDir,
      continued_from_iteration: previous?.iteration ?? null,
    });
    record.log(previous ? `run continued at iteration ${previous.iteration}` : "run started");
    if (previous) record.progress([["continued_at", io.now().toISOString()], ["continued_from_iteration", previous.iteration]]);
    for (const note of options.notes ?? []) record.log(note);
    record.startHeartbeat();
    const watch = io.watchControl(record.paths, () => this.push({ type: "control" }));
    this.cancels.push(() => watch.close());
    const { signals } = io;
    const onSignal = () => this.push({ type: "signal", signal: signals.firstSignal() ?? "SIGINT" });
    if (signals.interrupted.aborted) onSignal();
    else {
      signals.interrupted.addEventListener("abort", onSignal, { once: true });
      this.cancels.push(() => signals.interrupted.removeEventListener("abort", onSignal));
    }
    if (options.settings.stallLimit > 0) {
      const fingerprint = await io.fingerprint(options.projectDir, io.env, this.tasksFile() ?? undefined);
      this.machine = { ...this.machine, tally: { ...this.machine.tally, fingerprint } };
    }
  }

  private push(input: Input): void {
    this.queue.push(input);
    this.wake?.();
  }

  private async next(): Promise<Input> {
    for (;;) {
      if (this.crash) throw this.crash.error;
      const input = this.queue.shift();
      if (input) return input;
      await new Promise<void>((resolve) => (this.wake = resolve));
      this.wake = null;
    }
  }

  private fail(error: unknown): void {
    this.crash = { error };
    this.wake?.();
  }

  private tasksFile(plan: Plan = this.machine.plan): string | null {
    return plan.tasks ? resolve(this.options.projectDir, plan.tasks) : null;
  }

  /** The status fields the machine determines now. */
  status(): StatusPatch {
    return statusOf(this.machine);
  }

  private writeStatus(): void {
    // The ended machine's fields are written by finishRun, together with the ending.
    if (this.machine.phase.id === "ended") return;
    const patch = statusOf(this.machine);
    const text = JSON.stringify(patch);
    if (text === this.lastStatus) return;
    this.lastStatus = text;
    this.record.update(patch);
  }

  private perform(effect: Effect): void {
    const { io, record } = this;
    switch (effect.kind) {
      case "record":
        record.apply(effect.entries);
        return;
      case "look": {
        if (effect.what !== "sentinels") {
          const read = io.readPlan(record.paths.state);
          const plan = read.ok ? read.plan : this.machine.plan;
          const file = effect.what === "all" ? this.tasksFile(plan) : null;
          this.push({ type: "desired", read, ...(effect.what === "all" ? { tasks: file ? io.readTasks(file) : null } : {}) });
        }
        this.push({ type: "sentinel", ...io.readSentinels(record.paths), nowMs: io.now().getTime() });
        return;
      }
      case "spawn":
        this.spawn(effect.attempt);
        return;
      case "endTree":
        this.agent?.end(effect.why);
        this.dryRunEnd?.(effect.why);
        this.checks?.abort();
        return;
      case "runChecks":
        this.runChecks(effect);
        return;
      case "sleep":
        this.cancels.push(io.setTimer(effect.untilMs - io.now().getTime(), () => this.push({ type: "tick", nowMs: io.now().getTime() })));
        return;
      default: {
        const unreachable: never = effect;
        throw new Error(`unknown effect ${JSON.stringify(unreachable)}`);
      }
    }
  }

  private spawn(attempt: Attempt): void {
    const { io, record, options } = this;
    const { settings, projectDir, runId } = options;
    const adapter = io.adapterFor(settings.agent);
    const remaining = settings.maxCostUsd === null ? undefined : Math.max(0, settings.maxCostUsd - this.machine.tally.costUsd);
    const tasksFile = this.tasksFile();
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
    let done: Promise<AgentRun>;
    if (settings.dryRun) {
      record.log(`dry run: would run ${JSON.stringify(redactArgv(invocation.argv))} with the prompt on ${invocation.stdin === null ? "no stdin" : "stdin"}`);
      done = this.dryRun(settings.dryRunDelayMs);
    } else {
      const env = agentEnvironment(io.env, { ...invocation.env, RALPH_RUN_ID: runId, RALPH_RUN_DIR: record.paths.dir, RALPH_ITERATION: String(iteration) });
      const agent = startAgent({
        adapter,
        invocation,
        prompt: attempt.prompt,
        cwd: projectDir,
        env,
        marker: this.marker,
        logFile: record.paths.iterationLog(iteration),
        timeoutMs: settings.timeoutMs,
        idleTimeoutMs: settings.idleTimeoutMs,
        graceMs: settings.graceMs,
        urgent: io.signals.urgent,
        onEvent: (event) => {
          const text = event.text && event.text.length > EVENT_TEXT_LIMIT ? `${event.text.slice(0, EVENT_TEXT_LIMIT)}…` : event.text;
          record.event({ type: "agent_event", iteration, ...event, ...(text !== undefined ? { text } : {}) });
          if (event.kind === "result") this.push({ type: "agentResult" });
        },
        spawnAgent: io.spawnAgent,
        now: () => io.now().getTime(),
      });
      this.agent = agent;
      done = agent.done;
    }
    done.then(
      (run) => {
        this.agent = null;
        this.dryRunEnd = null;
        const limit = run.kind === "finished" && run.endedBy === null ? limitOf(run.outcome) : null;
        if (limit && run.kind === "finished") this.push({ type: "limitHit", run, limit, nowMs: io.now().getTime() });
        else this.push({ type: "agentExited", run });
      },
      (error: unknown) => this.fail(error),
    );
  }

  /** --dry-run: no agent; the iteration lasts the delay, or until it is ended. */
  private dryRun(delayMs: number): Promise<AgentRun> {
    const startedAt = this.io.now().getTime();
    return new Promise((resolve) => {
      const finish = (endedBy: EndedBy | null) => {
        cancel();
        this.dryRunEnd = null;
        const outcome = { finalMessage: null, sawResult: true };
        resolve({ kind: "finished", exit: { code: 0, signal: null }, outcome, endedBy, durationMs: this.io.now().getTime() - startedAt, leftovers: 0 });
      };
      const cancel = this.io.setTimer(delayMs, () => finish(null));
      this.dryRunEnd = (why) => finish(why);
    });
  }

  private runChecks(effect: Effect & { kind: "runChecks" }): void {
    const { io, options } = this;
    const controller = new AbortController();
    this.checks = controller;
    const tasksFile = this.tasksFile();
    const verdicts =
      effect.criteria.length > 0
        ? io.checkCriteria(effect.criteria, { cwd: options.projectDir, env: io.env, signal: controller.signal, ...(tasksFile ? { tasksFile } : {}) })
        : Promise.resolve([]);
    const fingerprint = effect.fingerprint ? verdicts.then(() => io.fingerprint(options.projectDir, io.env, tasksFile ?? undefined)) : Promise.resolve(null);
    Promise.all([verdicts, fingerprint]).then(
      ([checked, taken]) => {
        this.checks = null;
        this.push({ type: "checked", verdicts: checked, fingerprint: taken });
      },
      (error: unknown) => this.fail(error),
    );
  }
}
