// One run as the run view shows it: its iterations, the agent's output as `--live` shows it, and its run
// log. Each file is read in bounded chunks from its end (the readers `ralph logs` and the dashboard use),
// followed as it grows, and read further back only as far as the person scrolls: a 1 GB events.jsonl costs
// no more than a small one.
import { parseEventLine } from "../store/read-events.js";
import type { RunEvent } from "../store/event-log.js";
import { completeEnd, linesBackward, openLog } from "../store/file-lines.js";
import type { RunPaths } from "../store/run-paths.js";
import { tailLines, type Tail } from "../ui/file-tail.js";
import { createLineRenderer, type Segment } from "../view/render-lines.js";

/** Raw lines read per step back through a file. */
const WINDOW_LINES = 1000;
/** Bytes read at most per step back. */
const WINDOW_BYTES = 4 * 1024 * 1024;
/** Lines kept in memory per pane; scrolling further back says where the rest is. */
export const MAX_KEPT_LINES = 20_000;
/** Iterations kept (the newest). */
const MAX_ITERATIONS = 1000;

const AGENT_EVENT = Buffer.from('"type":"agent_event"');

/** One iteration as the run view lists it. */
export interface IterationRow {
  iteration: number;
  task: string | null;
  result: string;
  durationMs: number | null;
  costUsd: number | null;
  checks: { passed: number; failed: number };
  review: string | null;
  commit: string | null;
}

/** A file's lines before byte `before`, oldest first (at most a window's worth), and where they start. */
async function windowBefore(
  file: string,
  before: number | null,
  unwanted?: Buffer,
): Promise<{ lines: string[]; start: number; end: number }> {
  const handle = await openLog(file);
  if (!handle) return { lines: [], start: 0, end: 0 };
  try {
    const end = await completeEnd(handle);
    const from = before ?? end;
    const taken: string[] = [];
    let start = from;
    reading: for await (const lines of linesBackward(handle, from, undefined, unwanted)) {
      for (const line of lines) {
        if (taken.length >= WINDOW_LINES || from - line.start > WINDOW_BYTES) break reading;
        taken.push(line.text);
        start = line.start;
      }
    }
    if (taken.length === 0) start = 0;
    return { lines: taken.reverse(), start, end };
  } finally {
    await handle.close();
  }
}

/** A run's iterations, output and log, kept current while open. */
export class RunDetail {
  readonly iterations = new Map<number, IterationRow>();
  output: Segment[][] = [];
  log: string[] = [];
  /** Whether the run's files have been read once (until then the view says so rather than "empty"). */
  loaded = false;
  /** Where the loaded part of events.jsonl and run.log starts (0: the whole file is loaded). */
  private outputStart = 0;
  private logStart = 0;
  private readonly tails: Tail[] = [];
  private readonly renderer;
  private current = 0;
  private closed = false;

  constructor(
    private readonly paths: RunPaths,
    private readonly maxIterations: number,
    private readonly changed: () => void,
  ) {
    this.renderer = createLineRenderer(maxIterations);
  }

  /** Whether more lines are before the loaded ones of a pane. */
  hasEarlier(pane: "output" | "log"): boolean {
    return (pane === "output" ? this.outputStart : this.logStart) > 0;
  }

  /** Reads the end of the run's files and follows them. */
  async open(): Promise<void> {
    const [events, log, records] = await Promise.all([
      windowBefore(this.paths.events, null),
      windowBefore(this.paths.log, null),
      this.iterationEvents(),
    ]);
    if (this.closed) return;
    for (const event of records) this.record(event);
    this.output = this.render(events.lines, this.renderer);
    this.outputStart = events.start;
    this.log = log.lines;
    this.logStart = log.start;
    this.loaded = true;
    this.tails.push(
      tailLines(this.paths.events, events.end, (lines) => {
        for (const line of lines) {
          const event = parseEventLine(line);
          if (!event) continue;
          this.record(event);
          this.output.push(...this.renderer.event(event));
        }
        this.trim(this.output);
        this.changed();
      }),
      tailLines(this.paths.log, log.end, (lines) => {
        this.log.push(...lines);
        this.trim(this.log);
        this.changed();
      }),
    );
    this.changed();
  }

  /** Reads one more window back in a pane; resolves to the lines added at its top (0: none). */
  async earlier(pane: "output" | "log"): Promise<number> {
    const kept = pane === "output" ? this.output.length : this.log.length;
    if (!this.hasEarlier(pane) || kept >= MAX_KEPT_LINES) return 0;
    if (pane === "log") {
      const read = await windowBefore(this.paths.log, this.logStart);
      this.log = [...read.lines, ...this.log];
      this.logStart = read.start;
      return read.lines.length;
    }
    const read = await windowBefore(this.paths.events, this.outputStart);
    const lines = this.render(read.lines, createLineRenderer(this.maxIterations));
    this.output = [...lines, ...this.output];
    this.outputStart = read.start;
    return lines.length;
  }

  /** Stops following the files. */
  close(): void {
    this.closed = true;
    this.tails.forEach((tail) => tail.close());
  }

  private render(lines: string[], renderer: ReturnType<typeof createLineRenderer>): Segment[][] {
    const out: Segment[][] = [];
    for (const line of lines) {
      const event = parseEventLine(line);
      if (event) out.push(...renderer.event(event));
    }
    return out;
  }

  /** Keeps a followed pane to MAX_KEPT_LINES: the oldest go (and are read back again when scrolled to). */
  private trim(lines: unknown[]): void {
    if (lines.length <= MAX_KEPT_LINES) return;
    lines.splice(0, lines.length - MAX_KEPT_LINES);
    if (lines === this.output) this.outputStart = Math.max(this.outputStart, 1);
    else this.logStart = Math.max(this.logStart, 1);
  }

  /** The events that make the iteration list, oldest first: agent output is skipped in the bytes, never parsed. */
  private async iterationEvents(): Promise<RunEvent[]> {
    const handle = await openLog(this.paths.events);
    if (!handle) return [];
    const found: RunEvent[] = [];
    try {
      const end = await completeEnd(handle);
      let started = 0;
      reading: for await (const lines of linesBackward(handle, end, undefined, AGENT_EVENT)) {
        if (this.closed) break;
        for (const { text } of lines) {
          const event = parseEventLine(text);
          if (!event) continue;
          found.push(event);
          if (event.type === "iteration_started" && ++started >= MAX_ITERATIONS) break reading;
        }
      }
    } finally {
      await handle.close();
    }
    return found.reverse();
  }

  private record(event: RunEvent): void {
    const number = typeof event.iteration === "number" ? event.iteration : this.current;
    if (event.type === "iteration_started") {
      this.current = number;
      this.iterations.set(number, {
        iteration: number,
        task: typeof event.task === "string" ? event.task : null,
        result: "running",
        durationMs: null,
        costUsd: null,
        checks: { passed: 0, failed: 0 },
        review: null,
        commit: null,
      });
      if (this.iterations.size > MAX_ITERATIONS) this.iterations.delete(this.iterations.keys().next().value as number);
      return;
    }
    const row = this.iterations.get(number);
    if (!row) return;
    if (event.type === "iteration_ended") {
      row.result = String(event.result);
      row.durationMs = typeof event.duration_ms === "number" ? event.duration_ms : null;
      row.costUsd = typeof event.cost_usd === "number" ? event.cost_usd : null;
      row.commit = typeof event.commit === "string" ? event.commit.slice(0, 8) : null;
    } else if (event.type === "criteria_checked" && event.criterion !== "review") {
      if (event.passed === true) row.checks.passed++;
      else row.checks.failed++;
    } else if (event.type === "review_verdict") {
      row.review = String(event.verdict ?? "none");
    }
  }
}
