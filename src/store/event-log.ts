// events.jsonl: one JSON event per line (SPEC section 5), appended only.
import { appendFileSync } from "node:fs";

/** Event types of the stream. */
export type EventType =
  | "run_started"
  | "iteration_started"
  | "agent_event"
  | "iteration_ended"
  | "paused"
  | "resumed"
  | "waiting_limit"
  | "criteria_checked"
  | "state_change_rejected"
  | "state_set"
  | "run_ended";

/** One event as written to events.jsonl and to stdout with --json. */
export interface RunEvent {
  v: 1;
  ts: string;
  run: string;
  type: EventType;
  [field: string]: unknown;
}

/** Appends one event line to a file path, or to a descriptor opened for appending. */
export function appendEvent(file: string | number, event: RunEvent): void {
  appendFileSync(file, `${JSON.stringify(event)}\n`, { mode: 0o600 });
}
