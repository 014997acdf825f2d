// Loop overhead: ralph running `true` as its agent for 200 iterations against a shell loop running it 200 times.
// With BENCH_BEFORE=<another build's dist/src/cli/main.js>, that build is measured too, in the same rounds.
import { accessSync, constants, readFileSync } from "node:fs";
import { delimiter, join } from "node:path";
import { pathToFileURL } from "node:url";
import { createCgroup, removeCgroup } from "./cgroup.js";
import { cleanEnv, eventTime, fixture, RALPH, readEvents, runDir, scratchDir, startNode } from "./ralph-cli.js";
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

/** The builds to measure: this one, and BENCH_BEFORE's when given. */
function builds(): Array<{ label: string; main: string }> {
  const before = process.env.BENCH_BEFORE;
  return [{ label: "", main: RALPH }, ...(before ? [{ label: " (before)", main: before }] : [])];
}

/** Measures `runs` ralph loops per build and mode and `runs` shell loops, alternating. */
export async function benchLoopOverhead(runs: number, log: (line: string) => void): Promise<Row[]> {
  const dir = scratchDir("overhead");
  const cpuFile = join(dir, "cpu");
  const binary = trueBinary();
  const samples = new Samples();
  const loop = `i=0; while [ $i -lt ${ITERATIONS} ]; do "$0"; i=$((i+1)); done`;
  let attempt = 0;
  const probe = createCgroup();
  if (probe.dir !== null) removeCgroup(probe.dir);
  const modes = probe.dir !== null ? ["cgroup", "subreaper"] : ["subreaper"];
  // The runner's own CPU time (user + system, its children not included), reported at its exit.
  const preload = ["--import", pathToFileURL(fixture("report-cpu")).href];
  const timeRalph = async (mode: string, main: string) => {
    const id = `overhead-${++attempt}`;
    const started = nowMs();
    const args = ["run", "--name", id, "-n", String(ITERATIONS), "--agent", "command", "overhead", "--", "true"];
    const ralph = startNode([...preload, main, ...args], dir, cleanEnv({ RALPH_SUPERVISION: mode, BENCH_CPU_FILE: cpuFile }));
    const exit = await ralph.exited;
    if (exit.code !== 3) throw new Error(`ralph -n ${ITERATIONS} -- true: exit ${exit.code ?? exit.signal} (expected 3, MAX_ITERATIONS): ${exit.stderr}`);
    return { id, ms: exit.at - started, cpuMs: Number(readFileSync(cpuFile, "utf8")) / 1000 };
  };
  for (let round = 0; round < runs; round++) {
    for (const mode of modes) {
      // Each round swaps the builds' order, so that neither always runs right after the other's clean-up.
      const order = round % 2 === 0 ? builds() : builds().reverse();
      for (const { label, main } of order) {
        const key = `${mode}${label}`;
        const { id, ms: ralphMs, cpuMs } = await retryOnce(`loop overhead (${key})`, () => timeRalph(mode, main), log);
        const shellMs = await timeProcess("sh", ["-c", loop, binary], dir);
        samples.add(`${key}.ralph`, ralphMs);
        samples.add("shell", shellMs);
        samples.add(`${key}.perIteration`, (ralphMs - shellMs) / ITERATIONS);
        samples.add(`${key}.cpu`, cpuMs / ITERATIONS);
        // The same without ralph's start and finish: first iteration started → run ended, from events.jsonl.
        const events = readEvents(runDir(dir, id));
        const first = eventTime(events, (event) => event.type === "iteration_started");
        const last = eventTime(events, (event) => event.type === "run_ended");
        if (first !== null && last !== null) samples.add(`${key}.steady`, (last - first - shellMs) / ITERATIONS);
        log(`loop overhead: round ${round + 1}/${runs} (${key}): ralph ${ralphMs.toFixed(0)} ms (its own CPU ${cpuMs.toFixed(0)} ms), shell ${shellMs.toFixed(0)} ms`);
      }
    }
  }
  const shell = samples.get("shell") as ReturnType<typeof summarize>;
  const perShell = summarize(shell.samples.map((ms) => ms / ITERATIONS));
  const group = `Loop overhead, ${ITERATIONS} iterations of \`true\``;
  return modes.flatMap((mode) =>
    builds().flatMap(({ label }): Row[] => {
      const key = `${mode}${label}`;
      const perIteration = samples.get(`${key}.perIteration`);
      const steady = samples.get(`${key}.steady`);
      const command = `RALPH_SUPERVISION=${mode} ralph run -n ${ITERATIONS} --agent command x -- true`;
      return [
        { group, figure: `ralph (${mode} mode${label}) whole run (start to exit)`, unit: "ms", value: samples.get(`${key}.ralph`), baseline: { label: "shell loop", value: shell }, command },
        {
          group,
          figure: `ms per iteration added by ralph (${mode} mode${label})`,
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
          figure: `…the same without ralph's start and finish (${mode} mode${label})`,
          unit: "ms",
          value: steady,
          target: `≤ ${TARGET_MS} ms`,
          met: steady ? steady.median <= TARGET_MS : null,
          note: "first iteration_started → run_ended, minus the shell loop",
          command: `${command} (events.jsonl)`,
        },
        {
          group,
          figure: `ralph's own CPU time per iteration (${mode} mode${label})`,
          unit: "ms",
          value: samples.get(`${key}.cpu`),
          note: "the runner process's user + system time / 200 (start-up included; the agent's and Perl's not), which the machine's load barely moves",
          command: `${command} (process.cpuUsage at exit)`,
        },
      ];
    }),
  );
}
