// `ralph logs`: a run's story rendered as `ralph run --live` shows it, or one iteration's agent output.
import { existsSync, readFileSync } from "node:fs";
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
import { runLogReader } from "../run-log-reader.js";
import { UsageError } from "../usage-error.js";

/** `ralph logs [RUN] [-f] [--iteration N]`. */
export async function logsCommand(projectDir: string, given: string | undefined, follow: boolean, iteration: string | undefined): Promise<number> {
  const id = pickRun(projectDir, given, "show", true);
  if (iteration !== undefined) return showIteration(projectDir, id, iteration);
  const paths = runPaths(projectDir, id);
  const { status } = summariseRun(projectDir, id, isRunnerAlive, new Date());
  const renderer = createRenderer({ json: false, live: true, tty: false, showEnding: true, maxIterations: status?.max_iterations ?? 0 });
  const read = runLogReader(paths);
  const drain = () => {
    for (const entry of read()) {
      if ("event" in entry) renderer.event(entry.event);
      else renderer.log(entry.line);
    }
  };
  drain();
  if (!follow) return 0;
  for (;;) {
    const { summary } = summariseRun(projectDir, id, isRunnerAlive, new Date());
    drain();
    if (!summary.active) return 0;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** The agent's whole output of one iteration, read from iter-NNN.log with the agent's own parser. */
function showIteration(projectDir: string, id: string, raw: string): number {
  const parsed = parseCount(raw);
  if (!parsed.ok || parsed.value === 0) throw new UsageError(`--iteration: expected an iteration number (1 or more), got ${JSON.stringify(raw)}`);
  const paths = runPaths(projectDir, id);
  const file = paths.iterationLog(parsed.value);
  if (!existsSync(file)) throw new UsageError(`--iteration ${parsed.value}: run ${id} has no output for that iteration (see ralph logs ${id})`);
  const { status } = summariseRun(projectDir, id, isRunnerAlive, new Date());
  // A fallback agent may have run this iteration: its iteration_started event says which agent did.
  const started = runLogReader(paths)().flatMap((entry) =>
    "event" in entry && entry.event.type === "iteration_started" && entry.event.iteration === parsed.value ? [entry.event.agent] : [],
  );
  const named = started.at(-1) ?? status?.agent ?? "";
  const agent = (AGENT_NAMES as readonly string[]).includes(String(named)) ? (named as AgentName) : "command";
  const parser = adapterFor(agent).parser({ prompt: "" });
  const out: string[] = [iterationHeader({ iteration: parsed.value } as unknown as RunEvent, status?.max_iterations ?? 0)];
  for (const line of readFileSync(file, "utf8").split("\n")) {
    let events;
    try {
      events = parser.line(line);
    } catch {
      continue;
    }
    for (const event of events) {
      const shown = liveLine({ ...event } as unknown as RunEvent);
      if (shown !== null) out.push(shown);
    }
  }
  process.stdout.write(`${out.join("\n")}\n`);
  return 0;
}
