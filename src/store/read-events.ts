// Reads a run's events.jsonl back: every whole line that is a JSON event, in order (a torn or foreign line is skipped).
import type { RunEvent } from "./event-log.js";
import { readRegular } from "./regular-file.js";

/** One line of events.jsonl as an event, or null for a line cut short or written by something else. */
export function parseEventLine(line: string): RunEvent | null {
  try {
    const value = JSON.parse(line) as RunEvent;
    return value && typeof value === "object" && typeof value.type === "string" ? value : null;
  } catch {
    return null;
  }
}

/** The events of `file`, or none when it is missing or unreadable. */
export function readEventFile(file: string): RunEvent[] {
  let text: string;
  try {
    text = readRegular(file).toString("utf8");
  } catch {
    return [];
  }
  const events: RunEvent[] = [];
  for (const line of text.split("\n")) {
    if (line.trim() === "") continue;
    const event = parseEventLine(line);
    if (event) events.push(event);
  }
  return events;
}
