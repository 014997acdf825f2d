// Where notifications go, and which events each destination hears.

/** Event names a target can ask for: any event type of the stream, plus `stalled` (see eventNames). */
export const NOTIFY_EVENT_NAMES = [
  "run_started",
  "iteration_started",
  "iteration_ended",
  "paused",
  "resumed",
  "waiting_limit",
  "criteria_checked",
  "review_verdict",
  "state_change_rejected",
  "state_set",
  "control_refused",
  "needs_human",
  "answered",
  "agent_lingered",
  "run_ended",
  "stalled",
] as const;

/** One event name a target can filter on. */
export type NotifyEventName = (typeof NOTIFY_EVENT_NAMES)[number];

/** What a target hears when its configuration names no events. */
export const DEFAULT_NOTIFY_EVENTS: readonly NotifyEventName[] = [
  "run_ended",
  "waiting_limit",
  "needs_human",
  "stalled",
];

/** How a webhook body is shaped. */
export type WebhookFormat = "json" | "slack";

/** One notification destination with its event filter. */
export type NotifyTarget =
  /** A shell command line, run with `sh -c` like a `command` check; in `dir` (relative to the project) when typed in a subdirectory. */
  | { kind: "command"; command: string; events: readonly NotifyEventName[]; dir?: string }
  | { kind: "webhook"; url: string; format: WebhookFormat; events: readonly NotifyEventName[] }
  | { kind: "desktop"; events: readonly NotifyEventName[] };

/** The smallest event shape the notifier needs: the stream's envelope. */
export interface NotifyEvent {
  type: string;
  run?: string;
  [field: string]: unknown;
}

/**
 * The filter names an event answers to: its own type, and `stalled` for a `run_ended` whose reason
 * is STALLED. So a STALLED ending reaches a target that asked for `run_ended`, for `stalled`, or both
 * (once); a target that asked only for `stalled` hears no other ending.
 */
export function eventNames(event: NotifyEvent): string[] {
  return event.type === "run_ended" && event.reason === "STALLED" ? ["run_ended", "stalled"] : [event.type];
}

/** Whether `target` wants to hear `event`. */
export function targetWants(target: NotifyTarget, event: NotifyEvent): boolean {
  const wanted: readonly string[] = target.events;
  return eventNames(event).some((name) => wanted.includes(name));
}
