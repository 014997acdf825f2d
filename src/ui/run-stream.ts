// One run's page as a server-sent event stream: a snapshot of the end of the run's files first (its last
// output and log lines and the events among them), then every line appended to events.jsonl and run.log,
// every change of the run's row, and, once found, the charted events from before the snapshot.
// Everything is read in chunks, from the end: a 1 GB events.jsonl costs the server no more than a small one.
import { parseEventLine } from "../store/read-events.js";
import type { ServerResponse } from "node:http";
import type { RunEvent } from "../store/event-log.js";
import { completeEnd, linesBackward, openLog, type PlacedLine } from "../store/file-lines.js";
import { createLineRenderer, type Segment } from "../view/render-lines.js";
import type { RunRef } from "./projects.js";
import { openEventStream } from "./respond.js";
import { tailLines, type Tail } from "./file-tail.js";
import type { RunsHub } from "./runs-hub.js";

/** How many output and log lines the snapshot carries (the page keeps as many). */
const KEEP_LINES = 2000;
/** At most this much of the end of a file makes the snapshot. */
const WINDOW_BYTES = 4 * 1024 * 1024;
/** At most this many charted events from before the snapshot are sent (the newest). */
const MAX_EARLIER = 10_000;

const AGENT_EVENT = Buffer.from('"type":"agent_event"');

/** An event the page charts (agent output is sent as rendered lines instead). */
function charted(event: RunEvent): boolean {
  return event.type !== "agent_event";
}

/** The last lines of a file (oldest first), where they start, and where its complete lines end. */
interface Window {
  lines: string[];
  start: number;
  end: number;
}

/** About how many lines `line` shows: one, plus one per newline escaped in its JSON strings. */
function shownLines(line: string): number {
  let count = 1;
  for (let at = line.indexOf("\\n"); at !== -1; at = line.indexOf("\\n", at + 2)) count++;
  return count;
}

/** The end of a file, back to KEEP_LINES shown lines or WINDOW_BYTES, whichever comes first. */
async function endWindow(file: string, gone: () => boolean): Promise<Window> {
  const handle = await openLog(file);
  if (!handle) return { lines: [], start: 0, end: 0 };
  try {
    const end = await completeEnd(handle);
    const taken: PlacedLine[] = [];
    let start = end;
    let shown = 0;
    reading: for await (const lines of linesBackward(handle, end)) {
      for (const line of lines) {
        if (shown >= KEEP_LINES || end - line.start > WINDOW_BYTES || gone()) break reading;
        taken.push(line);
        start = line.start;
        shown += shownLines(line.text);
      }
    }
    return { lines: taken.reverse().map((line) => line.text), start, end };
  } finally {
    await handle.close();
  }
}

/** The charted events before byte `before`, oldest first (the newest MAX_EARLIER), read back from there. */
async function earlierEvents(file: string, before: number, gone: () => boolean): Promise<RunEvent[]> {
  const handle = before > 0 ? await openLog(file) : null;
  if (!handle) return [];
  const found: RunEvent[] = [];
  try {
    // Agent output is most of the file: skipped in the bytes, never decoded or parsed.
    reading: for await (const lines of linesBackward(handle, before, undefined, AGENT_EVENT)) {
      if (gone()) break;
      for (const { text } of lines) {
        const event = parseEventLine(text);
        if (event && charted(event)) found.push(event);
        if (found.length === MAX_EARLIER) break reading;
      }
    }
  } finally {
    await handle.close();
  }
  return found.reverse();
}

/** Streams run `ref` to `res` until the client goes away. */
export function streamRun(res: ServerResponse, ref: RunRef, hub: RunsHub): void {
  const send = openEventStream(res);
  const tails: Tail[] = [];
  let unsubscribe: () => void = () => undefined;
  let closed = false;
  const gone = () => closed;
  res.on("close", () => {
    closed = true;
    tails.forEach((tail) => tail.close());
    unsubscribe();
  });
  // A viewer that reads slowly holds its own tails, never the server: nothing more is read for it until
  // what it was sent has drained.
  const held = () => res.writableNeedDrain;
  res.on("drain", () => tails.forEach((tail) => tail.poke()));
  const renderer = createLineRenderer(hub.get(ref.project.key, ref.id)?.max_iterations ?? 0);
  const render = (lines: string[]) => {
    const events: RunEvent[] = [];
    const output: Segment[][] = [];
    for (const line of lines) {
      const event = parseEventLine(line);
      if (!event) continue;
      if (charted(event)) events.push(event);
      output.push(...renderer.event(event));
    }
    return { events, output };
  };
  const start = async () => {
    const [events, log] = await Promise.all([endWindow(ref.paths.events, gone), endWindow(ref.paths.log, gone)]);
    if (closed) return;
    const shown = render(events.lines);
    send("snapshot", {
      row: hub.get(ref.project.key, ref.id) ?? null,
      events: shown.events,
      output: shown.output.slice(-KEEP_LINES),
      log: log.lines,
    });
    unsubscribe = hub.subscribe((row) => {
      if (row.project === ref.project.key && row.id === ref.id) send("row", row);
    });
    tails.push(
      tailLines(
        ref.paths.events,
        events.end,
        (lines) => {
          const more = render(lines);
          // The page keeps KEEP_LINES lines: a burst of more is sent as its last ones.
          if (more.events.length + more.output.length > 0)
            send("append", { events: more.events, output: more.output.slice(-KEEP_LINES) });
        },
        held,
      ),
      tailLines(ref.paths.log, log.end, (lines) => send("log", { lines }), held),
    );
    const earlier = await earlierEvents(ref.paths.events, events.start, gone);
    if (earlier.length > 0) send("earlier", { events: earlier });
  };
  start().catch(() => res.destroy());
}
