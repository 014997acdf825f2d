// events.jsonl: one JSON event per line (SPEC section 5), appended only.
import { appendWhole } from "./append-whole.js";

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

/** Appends one whole event line (never a torn one) to a file path, or to a descriptor opened for appending. */
export function appendEvent(file: string | number, event: RunEvent): void {
  appendWhole(file, `${JSON.stringify(event)}\n`);
}
