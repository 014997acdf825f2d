// A `--parallel N` run: up to N child runs at once, one per pending task, each a full `ralph run` in its own
// worktree. The parent works on its integration branch: it merges each DONE child there, and it alone decides
// which tasks are done (its own copy of the task list, never re-read from a file a child could write).
import { resolve } from "node:path";
import { firstIncomplete, type Task } from "../judge/tasks.js";
import { MergeQueue } from "./merge-queue.js";
import { finishRun, type Ending, type RunResult } from "../run/finish-run.js";
import { newStatus } from "../run/new-status.js";
import { RunRecord } from "../run/run-record.js";
import type { Plan } from "../store/plan-file.js";
import { Redactor } from "../redact/redactor.js";
import { runPaths } from "../store/run-paths.js";
import { openQuestion } from "../control/list-runs.js";
import type { RunSettings } from "../config/run-options.js";
import type { RunStatus } from "../store/status-file.js";
import type { ChildExit, ChildHandle, FanOutIo } from "./fan-out-io.js";
import { allTasksEnding, childEnding, limitEnding, stopEnding } from "./fan-out-endings.js";
import { startNotifications } from "../engine/run-notifications.js";
import { remainingBudgetUsd } from "../control/limit-rules.js";

/** What to fan out. */
export interface FanOutOptions {
  projectDir: string;
  runId: string;
  settings: RunSettings & { parallel: number; tasks: string };
  plan: Plan;
  /** The parent's previous status when continuing it (`ralph continue`): its children count and spend go on. */
  previous: RunStatus | null;
  notes?: string[];
  /** The parent's integration worktree: its top, branch, the task file's path from the top and its text at HEAD. */
  integration: { path: string; branch: string; head: string; tasksPath: string; tasksText: string; base: string; baseBranch: string | null };
  /** How the parent's process supervises its children's agents. */
  supervision: RunStatus["supervision"];
}



interface Running {
  task: Task;
  handle: ChildHandle;
  /** The stop already asked of it: none, at its boundary, or now. */
  stopAsked: "none" | "stop" | "now";
}

/** How often the parent looks at its sentinels, limits and children's spend while waiting. */
const LOOK_MS = 200;

/** Runs the fan-out to its end and returns how it ended. */
export async function runFanOut(options: FanOutOptions, io: FanOutIo): Promise<RunResult> {
  const { projectDir, runId, settings } = options;
  const paths = runPaths(projectDir, runId);
  const file = resolve(projectDir, settings.tasks);
  const { previous } = options;
  const status = newStatus({
    runId,
    mode: "run",
    cwd: projectDir,
    agent: settings.agent,
    host: io.host,
    now: io.now(),
    state: "running",
    lastAction: "starting children",
    supervision: options.supervision,
    maxIterations: 0,
    iteration: previous?.iteration,
    costUsd: previous?.cost_usd,
    startedAt: previous?.started_at,
    worktree: { path: options.integration.path, branch: options.integration.branch, base: options.integration.base || null, baseBranch: options.integration.baseBranch },
  });
  // The parent's own events (its start, its children, its end) go to the same targets as any run's.
  const notifications = startNotifications(settings.notifyTargets, io.listener, { cwd: projectDir, env: io.env });
  const record = RunRecord.create(paths, { ...status, parallel: settings.parallel }, notifications?.listener ?? io.listener, io.now, new Redactor(io.env));
  notifications?.attach(record);
  record.guard.reserve();
  const { integration } = options;
  record.event({
    type: "run_started",
    agent: settings.agent,
    max_iterations: options.plan.maxIterations,
    cwd: projectDir,
    parallel: settings.parallel,
    continued_from_iteration: previous?.iteration ?? null,
    branch: integration.branch,
    worktree: integration.path,
    base: integration.base,
    base_branch: integration.baseBranch,
  });
  record.log(`run started: up to ${settings.parallel} child runs at once over ${settings.tasks}, merged into ${integration.branch} (worktree ${integration.path})`);
  for (const note of options.notes ?? []) record.log(note);
  record.startHeartbeat();
  // The runtime cap counts from the run's first start, as for any run.
  const startedAt = Date.parse(record.status.started_at);
  const running = new Map<string, Running>();
  const ended = new Map<string, { task: Task; costUsd: number }>();
  const failed = new Map<string, string>();
  let started = previous?.iteration ?? 0;
  const startedBefore = started;
  let resolving: (Running & { id: string }) | null = null;
  const earlier = previous ? io.readEvents(paths) : [];
  const queue = new MergeQueue(
    {
      runId,
      file,
      tasksName: settings.tasks,
      maxResolve: settings.maxResolve,
      integration,
      io,
      record,
      ending: () => ending,
      resolving(run, costUsd) {
        if (run === null && resolving) ended.set(resolving.id, { task: resolving.task, costUsd });
        resolving = run ? { ...run, stopAsked: "none" } : null;
        if (run && ending) passOn(ending);
      },
      abandoned: (taskId, reason) => failed.set(taskId, reason),
      wake: () => wake(),
    },
    earlier.filter((event) => event.type === "resolve_started").length,
  );
  // Continuing: a child that ended DONE but was never merged nor abandoned is merged first.
  const settled = new Set(earlier.filter((event) => event.type === "child_merged" || event.type === "merge_abandoned").map((event) => event.child));
  const initial = queue.tasks();
  for (const event of earlier) {
    if (event.type !== "child_ended" || event.reason !== "DONE" || settled.has(event.child as string)) continue;
    const task = initial.ok ? initial.tasks.find((candidate) => candidate.id === event.task && !candidate.done) : undefined;
    if (!task) continue;
    queue.push({ child: event.child as string, task });
    ended.set(event.child as string, { task, costUsd: 0 });
    record.log(`child ${String(event.child)} ended DONE before; its merge into ${integration.branch} is made now`);
  }
  const spentBefore = previous?.cost_usd ?? 0;
  let ending: Ending | null = null;
  let paused = false;
  let lastShown = "";
  let wake: () => void = () => undefined;
  const onSignal = () => wake();
  io.signals.interrupted.addEventListener("abort", onSignal);
  io.signals.urgent.addEventListener("abort", onSignal);

  // The children's open questions already told (a child prints nothing where a person looks: its parent says it).
  const told = new Map<string, string>();
  const tellQuestions = () => {
    for (const childId of running.keys()) {
      const question = openQuestion(io.readChildStatus(childId));
      if (question === null || told.get(childId) === question) continue;
      told.set(childId, question);
      record.log(`child ${childId} asks: ${JSON.stringify(question)}; it waits for: ralph answer ${childId} TEXT`);
    }
  };

  const spent = () => spentBefore + [...ended.values()].reduce((sum, child) => sum + child.costUsd, 0) + [...running.keys()].reduce((sum, id) => sum + (io.readChildStatus(id)?.cost_usd ?? 0), 0);

  const onExit = (childId: string, child: Running, exit: ChildExit) => {
    running.delete(childId);
    const childStatus = io.readChildStatus(childId);
    const costUsd = childStatus?.cost_usd ?? 0;
    ended.set(childId, { task: child.task, costUsd });
    const outcome = childEnding(childStatus, exit);
    let note: string;
    if (outcome.reason === "DONE") {
      queue.push({ child: childId, task: child.task });
      note = `task ${child.task.id} waits to be merged into ${integration.branch}`;
    } else {
      note = `task ${child.task.id} stays pending: ${outcome.detail}`;
      failed.set(child.task.id, `child ${childId} ended ${outcome.reason}: ${outcome.detail}`);
    }
    record.event({ type: "child_ended", child: childId, task: child.task.id, reason: outcome.reason, exit_code: exit.code, detail: outcome.detail, cost_usd: costUsd });
    record.progress([["child", childId], ["task", child.task.id], ["child_reason", outcome.reason], ["child_detail", outcome.detail], ["cost_usd", costUsd]]);
    record.log(`child ${childId} ended ${outcome.reason}; ${note}`);
    wake();
  };

  const start = (task: Task) => {
    started += 1;
    const childId = `${runId}-${started}`;
    const costLeft = remainingBudgetUsd(settings.maxCostUsd, spent());
    const timeLeft = settings.maxRuntimeMs === null ? null : Math.max(1000, settings.maxRuntimeMs - (io.now().getTime() - startedAt));
    const handle = io.startChild({ childId, taskId: task.id, maxCostUsd: costLeft, maxRuntimeMs: timeLeft });
    const child: Running = { task, handle, stopAsked: "none" };
    running.set(childId, child);
    handle.exited
      .then((exit) => onExit(childId, child, exit))
      .catch((error: unknown) => {
        // A record that cannot be written is the run's failure, never an unhandled rejection.
        ending ??= { reason: "FAILED", detail: `internal error: ${(error as Error).message ?? String(error)}` };
        running.delete(childId);
        wake();
      });
    record.event({ type: "child_started", child: childId, task: task.id, branch: `ralph/${childId}` });
    record.log(`child ${childId} started on task ${task.id}${task.title ? `: ${task.title}` : ""} (branch ralph/${childId})`);
  };


  /** Passes the parent's ending on to every child still running: the signal itself, or a STOP file. */
  const passOn = (end: Ending) => {
    const all: Array<[string, Running]> = [...running];
    if (resolving) all.push([resolving.id, resolving]);
    for (const [childId, child] of all) {
      if (end.reason === "INTERRUPTED") {
        // A second signal is passed on too: the child then skips its grace period, as the parent does.
        const signal = (end.signal ?? "SIGTERM") as NodeJS.Signals;
        const level = io.signals.urgent.aborted ? "now" : "stop";
        if (child.stopAsked !== level) child.handle.signal(signal);
        child.stopAsked = level;
        continue;
      }
      // Only `stop --now` ends a child's agent at once; a limit or STOP lets its iteration finish, as in any run.
      const now = end.reason === "STOPPED" && io.readSentinels(paths).stopNow;
      const level = now ? "now" : "stop";
      if (child.stopAsked === level || child.stopAsked === "now") continue;
      if (io.stopChild(childId, now)) child.stopAsked = level;
    }
  };

  try {
    for (;;) {
      const signal = io.signals.firstSignal();
      if (signal && ending?.reason !== "INTERRUPTED") ending = { reason: "INTERRUPTED", detail: `received ${signal}`, signal };
      const sentinels = io.readSentinels(paths);
      ending ??= stopEnding(sentinels) ?? limitEnding(settings, spent(), io.now().getTime() - startedAt);
      if (!ending && sentinels.pause !== paused) {
        paused = sentinels.pause;
        record.event({ type: paused ? "paused" : "resumed" });
        record.log(paused ? "paused: no new child run starts until PAUSE is removed (running children go on; pause them one by one)" : "resumed");
      }
      if (!ending && !paused) {
        const list = queue.tasks();
        if (!list.ok) ending = { reason: "FAILED", detail: `task list ${settings.tasks}: ${list.message}` };
        else {
          // A task whose child ended here (DONE or not) is not started again in this run, whatever the list says.
          const busy = new Set([...running.values(), ...ended.values()].map((child) => child.task.id));
          let pending = list.tasks.filter((task) => !task.done && !busy.has(task.id));
          while (running.size < settings.parallel && pending.length > 0) {
            const next = firstIncomplete(pending) as Task;
            start(next);
            pending = pending.filter((task) => task !== next);
          }
          if (running.size === 0 && queue.length === 0 && queue.current === null) ending = allTasksEnding(settings.tasks, started - startedBefore, [...failed.values()]);
        }
      }
      if (ending) passOn(ending);
      else tellQuestions();
      queue.mergeNext().catch((error: unknown) => {
        queue.hold();
        ending ??= { reason: "FAILED", detail: `integration branch ${integration.branch}: ${(error as Error).message ?? String(error)}` };
        wake();
      });
      const patch = { state: paused && !ending ? "paused" : "running", iteration: started, cost_usd: spent(), current_task: [...running.values()].map((child) => child.task.id).join(", ") || null, last_action: ending ? `ending: ${ending.detail}` : queue.current ? `merging ralph/${queue.current} into ${integration.branch}` : `${running.size} child run(s) running` } as const;
      // status.json is replaced only when it would say something new; the heartbeat keeps updated_at fresh.
      const shown = JSON.stringify(patch);
      if (shown !== lastShown) record.update(patch);
      lastShown = shown;
      if (ending && running.size === 0 && queue.current === null && (queue.length === 0 || queue.waiting || ending.reason === "INTERRUPTED")) break;
      await new Promise<void>((done) => {
        const timer = setTimeout(done, LOOK_MS);
        wake = () => {
          clearTimeout(timer);
          done();
        };
      });
    }
  } finally {
    io.signals.interrupted.removeEventListener("abort", onSignal);
    io.signals.urgent.removeEventListener("abort", onSignal);
  }
  let final: Ending = ending ?? { reason: "FAILED", detail: "internal error: the fan-out ended without a reason" };
  if (queue.length > 0) final = { ...final, detail: `${final.detail}; ${queue.length} DONE child(ren) not merged yet: ralph continue ${runId} merges them` };
  const result = finishRun(record, final, io.now(), { iteration: started, cost_usd: spent(), current_task: null });
  // The run_ended notification is on its way: give it a bounded time to arrive.
  await notifications?.drain(final, io.signals.interrupted);
  return result;
}
