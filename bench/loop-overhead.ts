// Loop overhead: ralph running `true` as its agent for 200 iterations against a shell loop running it 200 times.
import { accessSync, constants } from "node:fs";
import { delimiter, join } from "node:path";
import { createCgroup, removeCgroup } from "./cgroup.js";
import { cleanEnv, eventTime, readEvents, runDir, scratchDir, startRalph } from "./ralph-cli.js";
import type { Row } from "./report.js";
import { nowMs, retryOnce, Samples, summarize } from "./stats.js";
import { timeProcess } from "./ralph-cli.js";

const ITERATIONS = 200;
const TARGET_MS = 5;

/** The `true` program ralph finds on PATH (the shell loop must run the same binary, not its builtin). */
function trueBinary(): string {
  for (const dir of (process.env.PATH ?? "").split(delimiter)) {
    const candidate = join(dir, "true");
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  throw new Error("no `true` program on PATH");
}

/** Measures `runs` ralph loops and `runs` shell loops, alternating. */
export async function benchLoopOverhead(runs: number, log: (line: string) => void): Promise<Row[]> {
  const dir = scratchDir("overhead");
  const binary = trueBinary();
  const samples = new Samples();
  const loop = `i=0; while [ $i -lt ${ITERATIONS} ]; do "$0"; i=$((i+1)); done`;
  let attempt = 0;
  const probe = createCgroup();
  if (probe.dir !== null) removeCgroup(probe.dir);
  const modes = probe.dir !== null ? ["cgroup", "subreaper"] : ["subreaper"];
  const timeRalph = async (mode: string) => {
    const id = `overhead-${++attempt}`;
    const started = nowMs();
    const ralph = startRalph(["run", "--name", id, "-n", String(ITERATIONS), "--agent", "command", "overhead", "--", "true"], dir, { env: cleanEnv({ RALPH_SUPERVISION: mode }) });
    const exit = await ralph.exited;
    if (exit.code !== 3) throw new Error(`ralph -n ${ITERATIONS} -- true: exit ${exit.code ?? exit.signal} (expected 3, MAX_ITERATIONS): ${exit.stderr}`);
    return { id, ms: exit.at - started };
  };
  for (let round = 0; round < runs; round++) {
    for (const mode of modes) {
      const { id, ms: ralphMs } = await retryOnce(`loop overhead (${mode})`, () => timeRalph(mode), log);
      const shellMs = await timeProcess("sh", ["-c", loop, binary], dir);
      samples.add(`${mode}.ralph`, ralphMs);
      samples.add("shell", shellMs);
      samples.add(`${mode}.perIteration`, (ralphMs - shellMs) / ITERATIONS);
      // The same without ralph's start and finish: first iteration started → run ended, from events.jsonl.
      const events = readEvents(runDir(dir, id));
      const first = eventTime(events, (event) => event.type === "iteration_started");
      const last = eventTime(events, (event) => event.type === "run_ended");
      if (first !== null && last !== null) samples.add(`${mode}.steady`, (last - first - shellMs) / ITERATIONS);
      log(`loop overhead: round ${round + 1}/${runs} (${mode}): ralph ${ralphMs.toFixed(0)} ms, shell ${shellMs.toFixed(0)} ms`);
    }
  }
  const shell = samples.get("shell") as ReturnType<typeof summarize>;
  const perShell = summarize(shell.samples.map((ms) => ms / ITERATIONS));
  const group = `Loop overhead, ${ITERATIONS} iterations of \`true\``;
  return modes.flatMap((mode) => {
    const perIteration = samples.get(`${mode}.perIteration`);
    const steady = samples.get(`${mode}.steady`);
    const command = `RALPH_SUPERVISION=${mode} ralph run -n ${ITERATIONS} --agent command x -- true`;
    return [
      { group, figure: `ralph (${mode} mode) whole run (start to exit)`, unit: "ms", value: samples.get(`${mode}.ralph`), baseline: { label: "shell loop", value: shell }, command },
      {
        group,
        figure: `ms per iteration added by ralph (${mode} mode)`,
        unit: "ms",
        value: perIteration,
        baseline: { label: "shell loop per iteration", value: perShell },
        target: `≤ ${TARGET_MS} ms`,
        met: perIteration ? perIteration.median <= TARGET_MS : null,
        note: "(ralph − shell loop) / 200",
        command: `${command}; sh -c '${loop}' "$(which true)"`,
      },
      {
        group,
        figure: `…the same without ralph's start and finish (${mode} mode)`,
        unit: "ms",
        value: steady,
        target: `≤ ${TARGET_MS} ms`,
        met: steady ? steady.median <= TARGET_MS : null,
        note: "first iteration_started → run_ended, minus the shell loop",
        command: `${command} (events.jsonl)`,
      },
    ];
  });
}
