// `ralph logs`: a run's story rendered as `ralph run --live` shows it, or one iteration's agent output.
import { existsSync, statSync } from "node:fs";
import { adapterFor } from "../../agents/adapters.js";
import { AGENT_NAMES, type AgentName } from "../../agents/types.js";
import { parseCount } from "../../util/parse-value.js";
import { isRunnerAlive } from "../../control/runner-alive.js";
import { summariseRun } from "../../control/list-runs.js";
import { runPaths } from "../../store/run-paths.js";
import type { RunEvent } from "../../store/event-log.js";
import { pickRun } from "../pick-run.js";
import { createRenderer } from "../render.js";
import { iterationHeader, liveLine } from "../render-lines.js";
import { RunLogReader } from "../../view/run-log-reader.js";
import { ForwardLines } from "../../store/file-lines.js";
import { open } from "node:fs/promises";
import type { AgentEvent } from "../../agents/types.js";
import { LineSplitter } from "../../engine/line-splitter.js";
import { readStderrMarks, stderrMarksFile, type StderrMarks } from "../../store/stderr-marks.js";
import { UsageError } from "../usage-error.js";

/** `ralph logs [RUN] [-f] [--iteration N]`. */
export async function logsCommand(
  projectDir: string,
  given: string | undefined,
  follow: boolean,
  iteration: string | undefined,
): Promise<number> {
  const id = pickRun(projectDir, given, "show", true);
  if (iteration !== undefined) return showIteration(projectDir, id, iteration);
  const paths = runPaths(projectDir, id);
  const { status } = summariseRun(projectDir, id, isRunnerAlive, new Date());
  const renderer = createRenderer({
    json: false,
    live: true,
    tty: false,
    showEnding: true,
    maxIterations: status?.max_iterations ?? 0,
  });
  const reader = new RunLogReader(paths);
  const out = stdoutFlow();
  const drain = () =>
    reader.drain(async (entry) => {
      if ("event" in entry) renderer.event(entry.event);
      else renderer.log(entry.line);
      await out.room();
    }, out.gone);
  await drain();
  if (!follow) return 0;
  while (!out.gone()) {
    const { summary } = summariseRun(projectDir, id, isRunnerAlive, new Date());
    await drain();
    if (!summary.active) return 0;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return 0;
}

/** Waits while stdout's buffer is full, so reading never runs ahead of a slow reader; says when the reader has gone. */
function stdoutFlow(): { room: () => Promise<void>; gone: () => boolean } {
  let gone = false;
  process.stdout.on("error", () => (gone = true));
  return {
    room: () =>
      gone || !process.stdout.writableNeedDrain
        ? Promise.resolve()
        : new Promise((resolve) => {
            const done = () => {
              process.stdout.off("drain", done);
              process.stdout.off("error", done);
              resolve();
            };
            process.stdout.on("drain", done);
            process.stdout.on("error", done);
          }),
    gone: () => gone,
  };
}

/** The agent's whole output of one iteration, read from iter-NNN.log with the agent's own parser. */
async function showIteration(projectDir: string, id: string, raw: string): Promise<number> {
  const parsed = parseCount(raw);
  if (!parsed.ok || parsed.value === 0)
    throw new UsageError(`--iteration: expected an iteration number (1 or more), got ${JSON.stringify(raw)}`);
  const paths = runPaths(projectDir, id);
  const file = paths.iterationLog(parsed.value);
  const noOutput = new UsageError(
    `--iteration ${parsed.value}: run ${id} has no output for that iteration (see ralph logs ${id})`,
  );
  if (!existsSync(file)) throw noOutput;
  const { status } = summariseRun(projectDir, id, isRunnerAlive, new Date());
  // A fallback agent may have run this iteration: its iteration_started event says which agent did.
  const started = await startedBy(paths.events, parsed.value);
  // The log of an iteration that has not started is one made ahead for it (the run waits before it).
  if (started === null && statSync(file).size === 0) throw noOutput;
  const named = started ?? status?.agent ?? "";
  const agent = (AGENT_NAMES as readonly string[]).includes(String(named)) ? (named as AgentName) : "command";
  const parser = adapterFor(agent).parser({ prompt: "" });
  const out = stdoutFlow();
  process.stdout.write(
    `${iterationHeader({ iteration: parsed.value } as unknown as RunEvent, status?.max_iterations ?? 0)}\n`,
  );
  const shown = (event: AgentEvent) => liveLine({ ...event } as unknown as RunEvent);
  // Output lines go through the agent's parser; the lines it wrote to stderr (iter-NNN.stderr says which) are shown marked, where they came.
  const readLines = (line: string, fromStderr: boolean): Array<string | null> => {
    if (fromStderr) return [shown({ kind: "stderr", text: line })];
    try {
      return parser.line(line).map(shown);
    } catch {
      return [];
    }
  };
  for await (const batch of markedLines(file, readStderrMarks(stderrMarksFile(file)))) {
    if (out.gone()) break;
    const text = batch
      .flatMap(([line, fromStderr]) => readLines(line, fromStderr))
      .filter((line): line is string => line !== null);
    if (text.length > 0) process.stdout.write(`${text.join("\n")}\n`);
    await out.room();
  }
  return 0;
}

/** Output lines held back at most while the stderr line due before them is not read yet. */
const MAX_WAITING_LINES = 10_000;

/**
 * An iteration log's lines in the order written, each with whether it came from stderr: the bytes are parted
 * by `marks.ranges`, and each stream's lines are put back together by `marks.order`.
 */
async function* markedLines(file: string, marks: StderrMarks): AsyncGenerator<Array<[string, boolean]>> {
  const output: string[] = [];
  const errors: string[] = [];
  // The agent's own lines can be long (a whole file in one tool result): up to 16 MB each is shown.
  const outputLines = new LineSplitter((line) => output.push(line), 16 * 1024 * 1024);
  const errorLines = new LineSplitter((line) => errors.push(line), 16 * 1024 * 1024);
  const { ranges, order } = marks;
  let shownOutput = 0;
  let group = 0;
  let leftInGroup = order[1] ?? 0;
  /** The lines that can be placed now (all of them at the end). */
  const placed = (atEnd: boolean): Array<[string, boolean]> => {
    const lines: Array<[string, boolean]> = [];
    for (;;) {
      const after = group < order.length ? (order[group] ?? 0) : Number.MAX_SAFE_INTEGER;
      const stderrNext = shownOutput >= after || (atEnd && output.length === 0);
      if (stderrNext && errors.length > 0) {
        lines.push([errors.shift() as string, true]);
        if (--leftInGroup === 0) {
          group += 2;
          leftInGroup = order[group + 1] ?? 0;
        }
      } else if (output.length > 0 && (!stderrNext || atEnd || output.length > MAX_WAITING_LINES)) {
        // (Past MAX_WAITING_LINES the stderr line waited for is taken to be lost: the output goes on.)
        lines.push([output.shift() as string, false]);
        shownOutput += 1;
      } else break;
    }
    return lines;
  };
  const handle = await open(file, "r");
  try {
    const chunk = Buffer.alloc(1024 * 1024);
    let at = 0;
    let range = 0;
    for (
      let read = (await handle.read(chunk, 0, chunk.length, at)).bytesRead;
      read > 0;
      read = (await handle.read(chunk, 0, chunk.length, at)).bytesRead
    ) {
      let from = 0;
      while (from < read) {
        const position = at + from;
        while (range < ranges.length && (ranges[range + 1] ?? 0) <= position) range += 2;
        const start = ranges[range] ?? Number.MAX_SAFE_INTEGER;
        const inStderr = range < ranges.length && start <= position;
        const until = Math.min(read, (inStderr ? (ranges[range + 1] ?? 0) : start) - at);
        // The splitters copy what they keep of a line past this push, so the chunk may be reused.
        (inStderr ? errorLines : outputLines).push(chunk.subarray(from, until));
        from = until;
      }
      at += read;
      yield placed(false);
    }
    outputLines.end();
    errorLines.end();
    yield placed(true);
  } finally {
    await handle.close();
  }
}

/** The agent an iteration's iteration_started event names (a fallback agent may have run it), read a chunk at a time. */
async function startedBy(events: string, iteration: number): Promise<unknown> {
  const lines = new ForwardLines(events);
  let agent: unknown = null;
  for (let batch = await lines.next(); batch !== null; batch = await lines.next()) {
    for (const line of batch) {
      if (!line.includes('"iteration_started"')) continue;
      try {
        const event = JSON.parse(line) as RunEvent;
        if (event.type === "iteration_started" && event.iteration === iteration) agent = event.agent;
      } catch {
        // not an event
      }
    }
  }
  return agent;
}
