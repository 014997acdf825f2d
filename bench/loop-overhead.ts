// Loop overhead: ralph running `true` as its agent for 200 iterations against a shell loop running it 200 times,
// and, in the same rounds, the floor under it: Node starting `true` 200 times with its own spawn, and through
// ralph's supervision alone (spawn-loop fixture). With BENCH_BEFORE=<another build's dist/src/cli/main.cjs>,
// that build is measured too.
import { accessSync, constants, readFileSync } from "node:fs";
import { delimiter, join } from "node:path";
import { createCgroup, removeCgroup } from "./cgroup.js";
import {
  builds,
  cleanEnv,
  cpuReporter,
  eventTime,
  fixture,
  readEvents,
  runDir,
  scratchDir,
  startNode,
  timeProcess,
} from "./ralph-cli.js";
import type { Row } from "./report.js";
import { nowMs, retryOnce, Samples, summarize } from "./stats.js";

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
  const preload = cpuReporter(dir);
  // The floor: `kind` spawn (Node's own) or supervised (ralph's supervision in `mode`), 200 × true.
  const timeFloor = async (kind: "spawn" | "supervised", mode: string) => {
    const started = nowMs();
    const floor = startNode(
      [fixture("spawn-loop"), kind, String(ITERATIONS), binary],
      dir,
      cleanEnv({ RALPH_SUPERVISION: mode }),
    );
    const exit = await floor.exited;
    if (exit.code !== 0)
      throw new Error(`spawn-loop ${kind} (${mode}): exit ${exit.code ?? exit.signal}: ${exit.stderr}`);
    return exit.at - started;
  };
  const timeRalph = async (mode: string, main: string) => {
    const id = `overhead-${++attempt}`;
    const started = nowMs();
    const args = ["run", "--name", id, "-n", String(ITERATIONS), "--agent", "command", "overhead", "--", "true"];
    const ralph = startNode(
      [...preload, main, ...args],
      dir,
      cleanEnv({ RALPH_SUPERVISION: mode, BENCH_CPU_FILE: cpuFile }),
    );
    const exit = await ralph.exited;
    if (exit.code !== 3)
      throw new Error(
        `ralph -n ${ITERATIONS} -- true: exit ${exit.code ?? exit.signal} (expected 3, MAX_ITERATIONS): ${exit.stderr}`,
      );
    return { id, ms: exit.at - started, cpuMs: Number(readFileSync(cpuFile, "utf8")) / 1000 };
  };
  for (let round = 0; round < runs; round++) {
    const spawnMs = await retryOnce("loop overhead (Node's spawn)", () => timeFloor("spawn", "tree"), log);
    const spawnShellMs = await timeProcess("sh", ["-c", loop, binary], dir);
    samples.add("spawn.perIteration", (spawnMs - spawnShellMs) / ITERATIONS);
    for (const mode of modes) {
      const supervisedMs = await retryOnce(
        `loop overhead (${mode} supervision alone)`,
        () => timeFloor("supervised", mode),
        log,
      );
      const supervisedShellMs = await timeProcess("sh", ["-c", loop, binary], dir);
      samples.add(`${mode}.supervised`, (supervisedMs - supervisedShellMs) / ITERATIONS);
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
        samples.add(`${key}.overSupervision`, (ralphMs - supervisedMs) / ITERATIONS);
        // The same without ralph's start and finish: first iteration started → run ended, from events.jsonl.
        const events = readEvents(runDir(dir, id));
        const first = eventTime(events, (event) => event.type === "iteration_started");
        const last = eventTime(events, (event) => event.type === "run_ended");
        if (first !== null && last !== null) samples.add(`${key}.steady`, (last - first - shellMs) / ITERATIONS);
        log(
          `loop overhead: round ${round + 1}/${runs} (${key}): ralph ${ralphMs.toFixed(0)} ms (its own CPU ${cpuMs.toFixed(0)} ms), shell ${shellMs.toFixed(0)} ms`,
        );
      }
    }
  }
  const shell = samples.get("shell") as ReturnType<typeof summarize>;
  const perShell = summarize(shell.samples.map((ms) => ms / ITERATIONS));
  const group = `Loop overhead, ${ITERATIONS} iterations of \`true\``;
  const floorCommand = `node dist/bench/fixtures/spawn-loop.js`;
  const floor: Row[] = [
    {
      group,
      figure: "ms per iteration added by Node's own spawn (the floor)",
      unit: "ms",
      value: samples.get("spawn.perIteration"),
      baseline: { label: "shell loop per iteration", value: perShell },
      note: "a bare Node script starting `true` with piped stdin and output, one after the other, minus the shell loop",
      command: `${floorCommand} spawn ${ITERATIONS} "$(which true)"`,
    },
    ...modes.map((mode): Row => ({
      group,
      figure: `ms per iteration added by ralph's supervision alone (${mode} mode)`,
      unit: "ms",
      value: samples.get(`${mode}.supervised`),
      baseline: { label: "shell loop per iteration", value: perShell },
      note: "the same script starting each `true` through ralph's supervision and ending its tree as the runner does, without the loop",
      command: `RALPH_SUPERVISION=${mode} ${floorCommand} supervised ${ITERATIONS} "$(which true)"`,
    })),
  ];
  return floor.concat(
    modes.flatMap((mode) =>
      builds().flatMap(({ label }): Row[] => {
        const key = `${mode}${label}`;
        const perIteration = samples.get(`${key}.perIteration`);
        const steady = samples.get(`${key}.steady`);
        const command = `RALPH_SUPERVISION=${mode} ralph run -n ${ITERATIONS} --agent command x -- true`;
        return [
          {
            group,
            figure: `ralph (${mode} mode${label}) whole run (start to exit)`,
            unit: "ms",
            value: samples.get(`${key}.ralph`),
            baseline: { label: "shell loop", value: shell },
            command,
          },
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
          // (This build's supervision: over it, another build's figure would mix two builds.)
          ...(label === ""
            ? [
                {
                  group,
                  figure: `…over ralph's supervision alone (${mode} mode)`,
                  unit: "ms",
                  value: samples.get(`${key}.overSupervision`),
                  note: "(ralph − the supervised script) / 200: what the loop itself adds",
                  command,
                },
              ]
            : []),
        ];
      }),
    ),
  );
}
