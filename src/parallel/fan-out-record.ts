// The `--parallel` parent's own record: its status, events and notifications, opened with its start written.
import { newStatus } from "../run/new-status.js";
import { RunRecord } from "../run/run-record.js";
import { Redactor } from "../redact/redactor.js";
import type { RunPaths } from "../store/run-paths.js";
import { startNotifications } from "../engine/run-notifications.js";
import type { FanOutIo, FanOutOptions } from "./fan-out-io.js";
import { readBudgets } from "../spend/budget-config.js";
import type { SpendBook } from "../spend/spend-book.js";
import { dollars } from "../spend/spend-totals.js";

/**
 * Records the parent in the spend ledger as the first run of its family, with the budgets every child and
 * resolve run of it will share; returns what the family spent before (a continued parent's children).
 */
export function openFamilySpend(options: FanOutOptions, book: SpendBook, env: NodeJS.ProcessEnv, now: Date): number {
  const { settings } = options;
  const budgets = readBudgets(options.projectDir, env);
  book.open({
    projectDir: options.projectDir,
    runId: options.runId,
    parent: null,
    agent: settings.agent,
    model: settings.model,
    maxCostUsd: settings.maxCostUsd,
    maxTokens: settings.maxTokens ?? null,
    budgets: budgets.ok ? { project: budgets.project, user: budgets.user } : { project: null, user: null },
    now,
  });
  return dollars(book.totalsOf(options.runId, now.getTime()));
}

/** Opens the parent's record, writes its start and starts its heartbeat. */
export function openParentRecord(
  options: FanOutOptions,
  io: FanOutIo,
  paths: RunPaths,
): { record: RunRecord; notifications: ReturnType<typeof startNotifications> } {
  const { projectDir, runId, settings, previous, integration } = options;
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
    worktree: {
      path: integration.path,
      branch: integration.branch,
      base: integration.base || null,
      baseBranch: integration.baseBranch,
    },
  });
  // The parent's own events (its start, its children, its end) go to the same targets as any run's.
  const notifications = startNotifications(settings.notifyTargets, io.listener, {
    cwd: projectDir,
    env: io.env,
    runDir: paths.dir,
  });
  const record = RunRecord.create(
    paths,
    { ...status, parallel: settings.parallel },
    notifications?.listener ?? io.listener,
    io.now,
    new Redactor(io.env),
  );
  notifications?.attach(record);
  record.guard.reserve();
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
  record.log(
    `run started: up to ${settings.parallel} child runs at once over ${settings.tasks}, merged into ${integration.branch} (worktree ${integration.path})`,
  );
  for (const note of options.notes ?? []) record.log(note);
  record.startHeartbeat();
  return { record, notifications };
}
