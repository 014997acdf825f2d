// One run's page as a server-sent event stream: a snapshot first (past events, rendered output, log), then
// every line appended to events.jsonl and run.log, and every change of the run's row.
import type { ServerResponse } from "node:http";
import type { RunEvent } from "../store/event-log.js";
import { createLineRenderer, type Segment } from "../view/render-lines.js";
import type { RunRef } from "./projects.js";
import { openEventStream } from "./respond.js";
import { tailLines } from "./file-tail.js";
import type { RunsHub } from "./runs-hub.js";

/** How many output and log lines the snapshot carries (the page keeps as many). */
const KEEP_LINES = 2000;

/** An event the page charts (agent output is sent as rendered lines instead). */
function charted(event: RunEvent): boolean {
  return event.type !== "agent_event";
}

function parse(line: string): RunEvent | null {
  try {
    const value = JSON.parse(line) as RunEvent;
    return value && typeof value === "object" && typeof value.type === "string" ? value : null;
  } catch {
    return null; // a line cut short or written by something else says nothing
  }
}

/** Streams run `ref` to `res` until the client goes away. */
export function streamRun(res: ServerResponse, ref: RunRef, hub: RunsHub): void {
  const send = openEventStream(res);
  const renderer = createLineRenderer(hub.get(ref.project.key, ref.id)?.max_iterations ?? 0);
  let ready = false;
  const snapshot = { events: [] as RunEvent[], output: [] as Segment[][], log: [] as string[] };
  const onEvents = (lines: string[]) => {
    const events: RunEvent[] = [];
    const output: Segment[][] = [];
    for (const line of lines) {
      const event = parse(line);
      if (!event) continue;
      if (charted(event)) events.push(event);
      output.push(...renderer.event(event));
    }
    if (!ready) {
      snapshot.events.push(...events);
      snapshot.output = [...snapshot.output, ...output].slice(-KEEP_LINES);
    } else if (events.length + output.length > 0) send("append", { events, output });
  };
  const onLog = (lines: string[]) => {
    if (!ready) snapshot.log = [...snapshot.log, ...lines].slice(-KEEP_LINES);
    else send("log", { lines });
  };
  // Both tails read what is there synchronously before returning: that is the snapshot.
  const events = tailLines(ref.paths.events, 0, onEvents);
  const log = tailLines(ref.paths.log, 0, onLog);
  ready = true;
  send("snapshot", { row: hub.get(ref.project.key, ref.id) ?? null, events: snapshot.events, output: snapshot.output, log: snapshot.log });
  const unsubscribe = hub.subscribe((row) => {
    if (row.project === ref.project.key && row.id === ref.id) send("row", row);
  });
  res.on("close", () => {
    events.close();
    log.close();
    unsubscribe();
  });
}
