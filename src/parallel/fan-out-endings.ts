// The reasons a `--parallel` parent ends, and how it reads the ending of one of its children.
import type { RunSettings } from "../config/run-options.js";
import type { SentinelState } from "../control/control-files.js";
import { limitEnding as limitWhen, stopEnding as stopWhen } from "../control/limit-rules.js";
import { EXIT_REASONS, type ExitReason } from "../exit/exit-reasons.js";
import type { Ending } from "../run/finish-run.js";
import type { RunStatus } from "../store/status-file.js";
import type { ChildExit } from "./fan-out-io.js";

/** STOPPED when the parent's STOP file asks for it (the rule every run follows). */
export function stopEnding(sentinels: SentinelState): Ending | null {
  return stopWhen(sentinels, {
    stop: "STOP file: no new children; each child stops at its next boundary",
    now: "stop --now: every child's agent ended",
  });
}

/** The parent's own limits, by the same rules as any run: spend over all its children, and its runtime. */
export function limitEnding(
  settings: Pick<RunSettings, "maxCostUsd" | "maxRuntimeMs">,
  spentUsd: number,
  elapsedMs: number,
): Ending | null {
  // Its max_iterations caps each child, not the parent.
  return limitWhen(
    { maxIterations: 0, maxRuntimeMs: settings.maxRuntimeMs, maxCostUsd: settings.maxCostUsd },
    { iterations: 0, elapsedMs, costUsd: spentUsd },
  );
}

/** How a child ended: from its status.json, else (it never started: a usage error) from its exit and stderr. */
export function childEnding(
  status: RunStatus | null,
  exit: ChildExit,
): { reason: ExitReason | "NOT_STARTED"; detail: string } {
  const reason = status?.exit_reason;
  if (status && reason && (EXIT_REASONS as readonly string[]).includes(reason))
    return { reason, detail: status.last_action };
  if (status)
    return {
      reason: "INTERRUPTED",
      detail: `its runner ended without recording why (${exit.signal ?? `exit ${exit.code ?? "?"}`})`,
    };
  const said =
    exit.stderr
      .split("\n")
      .find((line) => line.trim() !== "")
      ?.replace(/^ralph: /, "") ?? "no message";
  return { reason: "NOT_STARTED", detail: `it could not start (exit ${exit.code ?? exit.signal ?? "?"}): ${said}` };
}

/**
 * The parent's ending once no child runs and none is left to start: FAILED when a task was left pending, DONE
 * when its children finished every task, NO_WORK only when nothing was open when it started (no child ran).
 */
export function allTasksEnding(tasksFile: string, childrenRan: boolean, leftPending: readonly string[]): Ending {
  if (leftPending.length > 0)
    return { reason: "FAILED", detail: `${leftPending.length} task(s) left pending: ${leftPending.join("; ")}` };
  if (!childrenRan) return { reason: "NO_WORK", detail: `every task in ${tasksFile} was already done` };
  return { reason: "DONE", detail: `the children finished every task in ${tasksFile}` };
}
