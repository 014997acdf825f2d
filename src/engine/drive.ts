// The driver: feeds inputs to `step`, performs the effects it returns through EngineIo, and keeps
// status.json in line with the machine. All of the engine's I/O happens here.
import { pinProgram, type PinnedProgram } from "../store/pinned-program.js";
import { readLedgerEntry } from "../control/ledger-entry.js";
import { resolve } from "node:path";
import type { TreeMarker } from "../process/inventory.js";
import type { Ending } from "../run/finish-run.js";
import type { RunRecord } from "../run/run-record.js";
import type { EngineIo } from "./engine-io.js";
import { workDirOf, type EngineOptions } from "./engine-options.js";
import { limitOf, newTally } from "./iteration-facts.js";
import { Looker } from "./look.js";
import type { AgentRun, Attempt, Effect, Input, Machine } from "./phase.js";
import { commitChanges } from "./commit-changes.js";
import { tamperedChecks, tamperedRun } from "./sandbox-tamper.js";
import type { TamperScan } from "../sandbox/tamper-scan.js";
import type { AgentHandle } from "./run-agent.js";
import type { Task } from "../judge/tasks.js";
import { startAttempt } from "./start-attempt.js";
import { LogAhead } from "../store/log-ahead.js";
import { InputQueue } from "./input-queue.js";
import { clearAnswer, discardAgentTimeRequests } from "../control/control-files.js";
import { updateLedgerEntry } from "../control/run-ledger.js";
import { statusOf, type StatusPatch } from "./status-of.js";
import { step } from "./step.js";
import { reviewsOf } from "./reviewing.js";
import { runReviews } from "./run-review.js";
import { isTree, snapshotTree, treeOfCommit, type TreeSnapshot } from "../worktree/tree-snapshot.js";
import { STALL_OFF, stallOffNote, tellOnce } from "./transitions.js";
import { readBudgets } from "../spend/budget-config.js";

/** Drives one run's machine: the only code of the engine that touches the outside world (through EngineIo). */
export class Driver {
  private machine: Machine;
  private readonly inputs = new InputQueue();
  private attempt: AgentHandle | null = null;
  private checks: AbortController | null = null;
  /** In a sandbox: says what was planted in the work tree since the run started, and undoes it (see tamper-scan.ts). */
  private tamper: TamperScan | null = null;
  /**
   * The work tree when the run started and after the iteration just judged: what a reviewer's diff spans. The
   * start stays put: a review runs only once the rest would end the run DONE, so work done in iterations that
   * were never reviewed (earlier tasks, an iteration without a claim) is in the diff too.
   */
  private trees: { from: TreeSnapshot | null; to: TreeSnapshot | null } = { from: null, to: null };
  private readonly reviewPins = new Map<string, PinnedProgram | null>();
  /** Ends the stall check's first look at the work tree (a signal, stop --now), before the loop reads inputs. */
  private firstLook: AbortController | null = null;
  private readonly cancels: Array<() => void> = [];
  private lastStatus = "";
  private readonly looker: Looker;
  /** The next iteration's log, made while this one's results are recorded. */
  private readonly logAhead = new LogAhead();

  constructor(
    private readonly options: EngineOptions,
    private readonly io: EngineIo,
    private readonly record: RunRecord,
    private readonly marker: TreeMarker,
  ) {
    const { settings, previous, plan } = options;
    // A run continued while its question was open goes back to waiting for the answer.
    const question = previous?.question ? { text: previous.question, iteration: previous.iteration } : null;
    const answer = question ? (previous?.answer ?? null) : null;
    this.machine = {
      phase: question && answer === null ? { id: "needsHuman" } : { id: "boundary" },
      plan,
      planProblem: null,
      toldOnce: [],
      tasks: null,
      config: {
        maxFailures: settings.maxFailures,
        stallLimit: settings.stallLimit,
        sameFailureLimit: settings.sameFailureLimit,
        onBillingError: settings.onBillingError,
        onLimit: settings.onLimit,
        onAsk: settings.onAsk,
        maxRuntimeMs: settings.maxRuntimeMs,
        maxCostUsd: settings.maxCostUsd,
        dryRun: settings.dryRun,
        agents: [settings.agent, ...settings.fallbackAgents],
        maxWaitMs: settings.maxWaitMs,
        onlyTask: settings.task,
        onlyTaskByIndex: settings.taskIndex !== null,
      },
      tally: newTally(
        {
          iteration: previous?.iteration,
          calls: previous?.calls,
          costUsd: previous?.cost_usd,
          tokens: previous?.tokens,
          sessionId: previous?.session_id,
          question,
          answer,
          review: previous?.review ?? null,
          reviewBase: previous ? (readLedgerEntry(record.paths.dir, io.env)?.review_base ?? null) : null,
        },
        io.now().getTime(),
      ),
    };
    this.looker = new Looker(
      io,
      record.paths,
      workDirOf(options),
      io.watchPlan(record.paths, plan, io.host.pid, marker),
    );
  }

  /** Steps the machine until it has ended; returns the ending. */
  async run(): Promise<Ending> {
    await this.begin();
    this.perform({ kind: "look", what: "all" });
    for (;;) {
      const input = await this.next();
      const { machine, effects } = step(this.machine, input);
      this.machine = machine;
      for (const effect of effects) this.perform(effect);
      // status.json holds the state the runner waits in. A step whose effects already queued the next input
      // (the look at the control files after an iteration is recorded) is passed through without a wait:
      // replacing the file for it would only cost a write that the next step replaces at once.
      if (!this.inputs.pending) this.writeStatus();
      if (machine.phase.id === "ended") return machine.phase.ending;
    }
  }

  /** After an internal error: end whatever still runs, and wait until it is gone. */
  async abandon(): Promise<void> {
    this.checks?.abort();
    const attempt = this.attempt;
    if (!attempt) return;
    attempt.end("interrupted");
    await attempt.done.catch(() => undefined);
  }

  /** Stops watching and cancels every timer; settles once a log made ahead for nothing is gone too. */
  close(): Promise<void> {
    for (const cancel of this.cancels.splice(0)) cancel();
    return this.logAhead.dispose();
  }

  private async begin(): Promise<void> {
    const { options, io, record } = this;
    const { previous } = options;
    this.openSpend();
    if (!previous) io.writePlan(record.paths.state, options.plan);
    record.event({
      type: "run_started",
      agent: options.settings.agent,
      max_iterations: options.plan.maxIterations,
      cwd: workDirOf(options),
      ...(options.worktree ? { branch: options.worktree.branch, worktree: options.worktree.path } : {}),
      ...(options.parent ? { parent: options.parent } : {}),
      continued_from_iteration: previous?.iteration ?? null,
      supervision: io.supervision ?? "tree",
    });
    record.log(previous ? `run continued after iteration ${previous.iteration}` : "run started");
    if (previous)
      record.progress([
        ["continued_at", io.now().toISOString()],
        ["continued_from_iteration", previous.iteration],
      ]);
    for (const note of options.notes ?? []) record.log(note);
    const { question } = this.machine.tally;
    if (question && this.machine.phase.id === "needsHuman") {
      record.event({ type: "needs_human", iteration: question.iteration, question: question.text });
      record.log(`still waiting for a person to answer: ${JSON.stringify(question.text)} (ralph answer)`);
    } else if (question) record.log("the question was answered; the next prompt carries the question and the answer");
    record.startHeartbeat();
    // The tamper scan's baseline, once: a repository planted by a check is new to every later scan too.
    const { sandbox } = io;
    if (sandbox?.watchTamper)
      this.tamper = await sandbox.watchTamper(workDirOf(options), resolve(record.paths.dir, "planted"), io.env);
    const watch = io.watchControl(record.paths, () => {
      // The first look's git (below) runs before the machine reads any input: stop --now ends it here.
      if (this.firstLook && io.readSentinels(record.paths).stopNow) this.firstLook.abort();
      this.push({ type: "control" });
      // Called from a timer or a watch: a failed write here (a full disk, a planted directory) must end the
      // run through the engine, never escape as an uncaught exception that skips the marker.
      try {
        this.serveSetRequests();
      } catch (error) {
        this.fail(error);
      }
    });
    this.cancels.push(() => watch.close());
    const { signals } = io;
    const onSignal = () => this.push({ type: "signal", signal: signals.firstSignal() ?? "SIGINT" });
    if (signals.interrupted.aborted) onSignal();
    else {
      signals.interrupted.addEventListener("abort", onSignal, { once: true });
      this.cancels.push(() => signals.interrupted.removeEventListener("abort", onSignal));
    }
    // A run file that can no longer be written (a full disk) ends the run FAILED, like a signal ends it.
    const failed = record.guard.failed;
    const onFailed = () =>
      this.push({ type: "recordFailed", message: record.guard.failure ?? "a run file could not be written" });
    if (failed.aborted) onFailed();
    else {
      failed.addEventListener("abort", onFailed, { once: true });
      this.cancels.push(() => failed.removeEventListener("abort", onFailed));
    }
    if (this.reviewed()) this.trees = { from: await this.reviewBase(signals.interrupted), to: null };
    // A reviewer script in the work tree is pinned as the run's record has it (read when the run was created,
    // before any agent ran; a continued run never takes it again): a rewritten one is never run.
    const recorded = readLedgerEntry(record.paths.dir, io.env)?.pins?.review;
    for (const criterion of reviewsOf(this.machine.plan.completionCriteria)) {
      const argv = criterion.review?.command;
      if (argv)
        this.reviewPins.set(JSON.stringify(argv), pinProgram(argv, workDirOf(options), workDirOf(options), recorded));
    }
    if (options.settings.stallLimit > 0) {
      const firstLook = new AbortController();
      const onInterrupt = (): void => firstLook.abort();
      this.firstLook = firstLook;
      if (signals.interrupted.aborted || io.readSentinels(record.paths).stopNow) firstLook.abort();
      signals.interrupted.addEventListener("abort", onInterrupt, { once: true });
      const fingerprint = await io.fingerprint(
        workDirOf(options),
        io.env,
        this.tasksFile() ?? undefined,
        firstLook.signal,
      );
      signals.interrupted.removeEventListener("abort", onInterrupt);
      this.firstLook = null;
      // The guard is on by default: where it cannot work (no git) the run says so once, here.
      const told =
        !fingerprint.ok && !firstLook.signal.aborted
          ? tellOnce(this.machine, STALL_OFF, stallOffNote(fingerprint.message))
          : { machine: this.machine, entries: [] };
      for (const entry of told.entries) if (entry.kind === "log") record.log(entry.line);
      this.machine = { ...told.machine, tally: { ...told.machine.tally, fingerprint } };
    }
  }

  /**
   * Records the run in the spend ledger with its budgets. A continued run's spend so far is the ledger's, not
   * what status.json says: that file is in the run directory, where an agent can write.
   */
  private openSpend(): void {
    const { options, io } = this;
    const book = io.spend;
    if (!book) return;
    const { settings } = options;
    const budgets = readBudgets(options.projectDir, io.env);
    if (!budgets.ok) this.record.log(`no project or user budget applies: ${budgets.message}`);
    const { known } = book.open({
      projectDir: options.projectDir,
      runId: options.runId,
      parent: options.parent ?? null,
      agent: settings.agent,
      model: settings.model,
      maxCostUsd: settings.maxCostUsd,
      maxTokens: settings.maxTokens ?? null,
      budgets: budgets.ok ? { project: budgets.project, user: budgets.user } : { project: null, user: null },
      now: io.now(),
    });
    if (!options.previous || !known) return;
    const spent = book.totalsOf(options.runId, io.now().getTime());
    const { tokens } = spent;
    const tally = {
      ...this.machine.tally,
      calls: spent.calls,
      costUsd: spent.cost_usd ?? 0,
      tokens: {
        input: tokens.input,
        output: tokens.output,
        cacheRead: tokens.cache_read,
        cacheWrite: tokens.cache_write,
      },
    };
    this.machine = { ...this.machine, tally };
  }

  /** Records an agent call's spend in the ledger; the run then counts the cost the ledger holds (reported, else computed from tokens). */
  private recordSpend(attempt: Attempt, ended: AgentRun): AgentRun {
    const { io, options } = this;
    if (ended.kind !== "finished" || options.settings.dryRun || !io.spend) return ended;
    const { outcome } = ended;
    const model = outcome.model ?? (attempt.agent === options.settings.agent ? options.settings.model : null);
    const call = io.spend.record({
      role: "iteration",
      iteration: attempt.iteration,
      agent: attempt.agent,
      model,
      costUsd: outcome.costUsd,
      tokens: outcome.tokens,
      durationMs: ended.durationMs,
      at: io.now(),
    });
    if (!call) return ended;
    const { costUsd: _reported, ...rest } = outcome;
    return {
      ...ended,
      outcome: { ...rest, ...(call.cost_usd !== null ? { costUsd: call.cost_usd } : {}), costSource: call.cost_source },
    };
  }

  private push(input: Input): void {
    this.inputs.push(input);
  }

  private next(): Promise<Input> {
    return this.inputs.next();
  }

  private fail(error: unknown): void {
    this.inputs.fail(error);
  }

  private tasksFile(): string | null {
    const { tasks } = this.machine.plan;
    return tasks ? resolve(workDirOf(this.options), tasks) : null;
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
    this.record.updateSoon(patch);
  }

  private perform(effect: Effect): void {
    const { io, record } = this;
    switch (effect.kind) {
      case "record":
        record.apply(effect.entries);
        return;
      case "look": {
        const { inputs, entries } = this.looker.look(effect.what);
        record.apply(entries);
        for (const input of inputs) this.push(input);
        return;
      }
      case "spawn":
        this.spawn(effect.attempt);
        return;
      case "endTree":
        this.attempt?.end(effect.why);
        this.checks?.abort();
        return;
      case "runChecks":
        this.runChecks(effect);
        return;
      case "review":
        this.review(effect);
        return;
      case "reopenTasks":
        this.reopen(effect.tasks);
        return;
      case "clearAnswer":
        clearAnswer(record.paths);
        return;
      case "sleep":
        this.cancels.push(
          io.setTimer(effect.untilMs - io.now().getTime(), () =>
            this.push({ type: "tick", nowMs: io.now().getTime() }),
          ),
        );
        return;
      default: {
        const unreachable: never = effect;
        throw new Error(`unknown effect ${JSON.stringify(unreachable)}`);
      }
    }
  }

  private spawn(attempt: Attempt): void {
    const { io } = this;
    const started = startAttempt(attempt, {
      options: this.options,
      io,
      record: this.record,
      marker: this.marker,
      tasksFile: this.tasksFile(),
      spentUsd: this.machine.tally.costUsd,
      onResult: () => this.push({ type: "agentResult" }),
      logAhead: this.logAhead,
    });
    this.attempt = started;
    // An error thrown after the agent ended (a failed write, a failed commit) is routed to fail() too.
    started.done.then((run) => this.afterAgent(attempt, run)).catch((error: unknown) => this.fail(error));
  }

  /** Once the agent's tree has ended: the plan guard, the commit, then the input for step. */
  private async afterAgent(attempt: Attempt, agentRun: AgentRun): Promise<void> {
    const { io } = this;
    this.attempt = null;
    const ended = this.recordSpend(attempt, agentRun);
    // Nothing of the agent is left: the next iteration's log can be made now, off this thread.
    if (!this.options.settings.dryRun)
      void this.logAhead.prepare(this.record.paths.iterationLog(attempt.iteration + 1));
    this.refuseAgentTimeRequests(attempt.iteration);
    this.guardPlanAfter(attempt.iteration);
    const planted = this.tamper ? await this.tamper() : [];
    // A signal or stop --now while the commit's git runs ends it, as it ends checks.
    const commit = new AbortController();
    this.checks = commit;
    const run =
      planted.length > 0
        ? tamperedRun(this.record, attempt.iteration, ended, planted)
        : await commitChanges(this.options, io, this.record, attempt, ended, commit.signal).finally(() => {
            if (this.checks === commit) this.checks = null;
          });
    if (this.checks === commit) this.checks = null;
    const limit =
      run.kind === "finished" && run.endedBy === null
        ? limitOf(run.outcome, this.options.settings.onBillingError)
        : null;
    if (limit && run.kind === "finished") this.push({ type: "limitHit", run, limit, nowMs: io.now().getTime() });
    else {
      // The task list as the agent left it: a task it marked done counts only once the checks pass.
      const tasksFile = this.tasksFile();
      this.push({ type: "agentExited", run, tasks: tasksFile ? io.readTasks(tasksFile) : null });
    }
  }

  /** Marks tasks not done again; a file that cannot be changed is logged (the next look reads what it holds). */
  private reopen(tasks: Task[]): void {
    const file = this.tasksFile();
    if (!file) return;
    const reopened = this.io.reopenTasks(
      file,
      tasks.map((task) => task.id),
    );
    if (!reopened.ok)
      this.record.log(
        `could not reopen ${tasks.map((task) => task.id).join(", ")}: ${this.machine.plan.tasks ?? file} ${reopened.message}`,
      );
  }

  /** A `ralph set` request is served as soon as it is seen; the plan it changes goes to step. */
  private serveSetRequests(): void {
    const entries = this.looker.serveSetRequests();
    if (entries.length === 0) return;
    this.record.apply(entries);
    this.push({ type: "desired", read: { ok: true, plan: this.looker.planWatch.plan } });
  }

  /** Right after an agent's tree ended: control requests written while it ran are not taken, and said so. */
  private refuseAgentTimeRequests(iteration: number): void {
    for (const file of discardAgentTimeRequests(this.record.paths)) {
      const reason =
        "written while the agent ran, so it may be the agent's own; only a request made after the iteration counts";
      this.record.log(`${file} not taken: ${reason}`);
      this.record.event({ type: "control_refused", iteration, file, reason });
    }
  }

  /** After an agent iteration: a state.md change written while it ran is reported; only its tightenings apply. */
  private guardPlanAfter(iteration: number): void {
    const rejected = this.looker.planWatch.afterIteration(iteration);
    if (!rejected) return;
    const applied = rejected.applied.length > 0 ? `; applied only: ${rejected.applied.join(", ")}` : "";
    this.record.log(
      `state.md was changed while iteration ${iteration} ran; not applied: ${rejected.ignored.join(", ") || "nothing"}${applied}` +
        ` (kept as ${rejected.keptAs}; change the run with ralph set, or edit state.md while it is paused)`,
    );
    this.record.event({
      type: "state_change_rejected",
      iteration,
      ignored: rejected.ignored,
      applied: rejected.applied,
      kept_as: rejected.keptAs,
    });
    this.push({ type: "desired", read: { ok: true, plan: this.looker.planWatch.plan } });
  }

  /** Whether the plan has review criteria (their diffs need snapshots of the tree). */
  private reviewed(): boolean {
    return reviewsOf(this.machine.plan.completionCriteria).length > 0;
  }

  /**
   * The tree reviews diff against: the one a continued run started from, else the tree now. It is kept in the
   * runner's record, out of the agent's reach: status.json, which an unsandboxed agent can rewrite after a crash,
   * would let it move the base past its own unreviewed work.
   */
  private async reviewBase(signal: AbortSignal): Promise<TreeSnapshot> {
    const workDir = workDirOf(this.options);
    const kept = this.machine.tally.reviewBase;
    if (kept !== null && (await isTree(workDir, this.io.env, kept))) return { ok: true, tree: kept };
    // A worktree run's work started at its base commit (for a task branch gone on with, where that branch
    // left the one the run started from): all of it since then is unreviewed, whatever the tree holds now.
    const base = this.options.worktree?.base ?? null;
    const baseTree = base !== null ? await treeOfCommit(workDir, this.io.env, base) : null;
    const now = baseTree ?? (await snapshotTree(workDir, this.io.env, signal));
    if (now.ok) {
      this.machine = { ...this.machine, tally: { ...this.machine.tally, reviewBase: now.tree } };
      updateLedgerEntry(this.record.paths.dir, { review_base: now.tree }, this.io.env);
    }
    return now;
  }

  /** Runs the reviewers; aborting (a signal, stop --now) ends the one under way. */
  private review(effect: Effect & { kind: "review" }): void {
    const controller = new AbortController();
    this.checks = controller;
    // What the judged iteration's agent spent is not in the tally yet: the reviewers' budget is what is left after it.
    const { phase } = this.machine;
    const spentUsd =
      this.machine.tally.costUsd + (phase.id === "reviewing" ? (phase.judging.run.outcome.costUsd ?? 0) : 0);
    const context = {
      options: this.options,
      io: this.io,
      record: this.record,
      marker: this.marker,
      tasksFile: this.tasksFile(),
      spentUsd,
      trees: this.trees,
      pins: this.reviewPins,
      signal: controller.signal,
    };
    runReviews(effect, context).then(
      (reviews) => {
        if (this.checks === controller) this.checks = null;
        this.push({ type: "reviewed", reviews });
      },
      (error: unknown) => this.fail(error),
    );
  }

  private runChecks(effect: Effect & { kind: "runChecks" }): void {
    const { io, options } = this;
    const controller = new AbortController();
    this.checks = controller;
    const tasksFile = this.tasksFile();
    // The checks run the agent's code with the tree writable: what they planted fails them, before any snapshot or commit.
    const tamper = this.tamper;
    const verdicts =
      effect.criteria.length > 0
        ? io
            .checkCriteria(effect.criteria, {
              cwd: workDirOf(options),
              env: io.env,
              signal: controller.signal,
              spawn: io.spawnAgent,
              ...(tasksFile ? { tasksFile } : {}),
            })
            .then(async (checked) => {
              const planted = tamper ? await tamper() : [];
              return planted.length > 0 ? tamperedChecks(this.record, effect.iteration, checked, planted) : checked;
            })
        : Promise.resolve([]);
    // With reviews, the tree the iteration left is kept: a review's diff ends there.
    const snapshot = this.reviewed()
      ? verdicts.then(() => snapshotTree(workDirOf(options), io.env, controller.signal))
      : Promise.resolve(null);
    const fingerprint = effect.fingerprint
      ? verdicts.then(() => io.fingerprint(workDirOf(options), io.env, tasksFile ?? undefined, controller.signal))
      : Promise.resolve(null);
    Promise.all([verdicts, fingerprint, snapshot]).then(
      ([checked, taken, tree]) => {
        this.checks = null;
        if (tree) this.trees = { ...this.trees, to: tree };
        this.push({ type: "checked", verdicts: checked, fingerprint: taken });
      },
      (error: unknown) => this.fail(error),
    );
  }
}
