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
import { UsageError } from "../usage-error.js";

/** `ralph logs [RUN] [-f] [--iteration N]`. */
export async function logsCommand(projectDir: string, given: string | undefined, follow: boolean, iteration: string | undefined): Promise<number> {
  const id = pickRun(projectDir, given, "show", true);
  if (iteration !== undefined) return showIteration(projectDir, id, iteration);
  const paths = runPaths(projectDir, id);
  const { status } = summariseRun(projectDir, id, isRunnerAlive, new Date());
  const renderer = createRenderer({ json: false, live: true, tty: false, showEnding: true, maxIterations: status?.max_iterations ?? 0 });
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
  if (!parsed.ok || parsed.value === 0) throw new UsageError(`--iteration: expected an iteration number (1 or more), got ${JSON.stringify(raw)}`);
  const paths = runPaths(projectDir, id);
  const file = paths.iterationLog(parsed.value);
  const noOutput = new UsageError(`--iteration ${parsed.value}: run ${id} has no output for that iteration (see ralph logs ${id})`);
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
  process.stdout.write(`${iterationHeader({ iteration: parsed.value } as unknown as RunEvent, status?.max_iterations ?? 0)}\n`);
  // The agent's own lines can be long (a whole file in one tool result): up to 16 MB each is shown.
  const lines = new ForwardLines(file, 0, 16 * 1024 * 1024);
  for (let batch = await lines.next(); batch !== null && !out.gone(); batch = await lines.next()) {
    const shown: string[] = [];
    for (const line of batch) {
      let events;
      try {
        events = parser.line(line);
      } catch {
        continue;
      }
      for (const event of events) {
        const text = liveLine({ ...event } as unknown as RunEvent);
        if (text !== null) shown.push(`${text}\n`);
      }
    }
    if (shown.length > 0) process.stdout.write(shown.join(""));
    await out.room();
  }
  return 0;
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
