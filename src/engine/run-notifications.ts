// Sends a run's events out: the one place the event stream meets the notifier. Every event the run records
// passes through the listener given to RunRecord; this wraps that listener so the notifier hears each one.
import { Notifier, type NotificationFailure } from "../notify/notifier.js";
import { readLedgerEntry } from "../control/ledger-entry.js";
import type { NotifyTarget } from "../notify/notify-target.js";
import type { SpawnTree } from "../process/run-supervised.js";
import type { RecordListener, RunRecord } from "../run/run-record.js";
import type { Ending } from "../run/finish-run.js";

/** How long the last notifications may take before the runner exits. */
const DRAIN_MS = 5000;
/** ...once a signal asked the runner to stop (so Ctrl-C stays prompt). */
const DRAIN_AFTER_SIGNAL_MS = 1000;

/** A run's notifications: the listener to record through, and the wait at the end. */
export interface RunNotifications {
  /** The run's listener, also feeding the notifier. */
  listener: RecordListener;
  /** Where failures are recorded (as `notification_failed` events and log lines); set once the record exists. */
  attach(record: RunRecord): void;
  /** Waits for deliveries in flight, up to DRAIN_MS (DRAIN_AFTER_SIGNAL_MS after a signal, or once `signal` aborts). */
  drain(ending: Ending, signal: AbortSignal): Promise<void>;
}

/** Notifications to `targets` for run directory `runDir` (null when there are none); commands run in `cwd` with `env`. */
export function startNotifications(
  targets: readonly NotifyTarget[],
  listener: RecordListener,
  options: { cwd: string; env: NodeJS.ProcessEnv; spawn?: SpawnTree | undefined; runDir: string },
): RunNotifications | null {
  if (targets.length === 0) return null;
  let record: RunRecord | null = null;
  const onFailure = (failure: NotificationFailure): void => {
    if (!record) return;
    record.log(`notification failed: ${failure.target} (${failure.event}): ${failure.error}`);
    record.event({ type: "notification_failed", ...failure });
  };
  // Commands are supervised like the agent (in cgroup mode, each in a cgroup of its own).
  // A script in the project is pinned as the run's record has it, from when the run was created.
  const pins = readLedgerEntry(options.runDir)?.pins?.notify;
  const notifier = new Notifier(targets, {
    onFailure,
    cwd: options.cwd,
    env: options.env,
    ...(pins ? { pins } : {}),
    ...(options.spawn ? { spawn: options.spawn } : {}),
  });
  return {
    listener: {
      event(event) {
        listener.event(event);
        // A failure is never notified itself: a target that cannot be reached would only fail again.
        if (event.type !== "notification_failed") notifier.notify(event);
      },
      log: (line) => listener.log(line),
    },
    attach(given) {
      record = given;
    },
    async drain(ending, signal) {
      const afterSignal = ending.reason === "INTERRUPTED";
      await notifier.drain(afterSignal ? DRAIN_AFTER_SIGNAL_MS : DRAIN_MS, { signal, withinMs: DRAIN_AFTER_SIGNAL_MS });
      // Failures recorded while draining reopened events.jsonl.
      record?.close();
    },
  };
}
