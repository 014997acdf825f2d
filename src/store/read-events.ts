// Reads a run's events.jsonl back: every whole line that is a JSON event, in order (a torn or foreign line is skipped).
import type { RunEvent } from "./event-log.js";
import { readRegular } from "./regular-file.js";

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
    try {
      const event = JSON.parse(line) as RunEvent;
      if (event && typeof event === "object" && typeof event.type === "string") events.push(event);
    } catch {
      // a line cut short by a crash
    }
  }
  return events;
}
