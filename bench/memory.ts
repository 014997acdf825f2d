// Memory: ralph's peak RSS while its agent streams 200 MB of output, against the same run with no output.
import { readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { cleanEnv, fixture, runDir, scratchDir, startRalph } from "./ralph-cli.js";
import { statusKb } from "./proc-watch.js";
import type { Row } from "./report.js";
import { nowMs, retryOnce, Samples } from "./stats.js";

const MB = 200;
/** Peak RSS with 200 MB of output, at most this many times the same run's with none (flat in output size). */
const TARGET_RATIO = 1.2;
/** A run still going after this long is stopped (SIGTERM) and its output shape is not measured again. */
const CAP_MS = 30_000;
/** Output shapes: Claude Code stream-json through the claude adapter, and raw bytes through the command agent (also on stderr). */
const MODES = [
  { mode: "json", label: "stream-json lines (claude adapter)" },
  { mode: "raw", label: "raw random bytes (command agent)" },
  { mode: "flat", label: "one unterminated line (command agent)" },
  { mode: "stderr", label: "raw random bytes on stderr (command agent)" },
] as const;

type Mode = (typeof MODES)[number]["mode"];

/** What one run showed. */
interface MemoryRun {
  /** The larger of getrusage's maxrss at exit and VmHWM sampled meanwhile. */
  peakMb: number;
  seconds: number;
  /** How much output ralph had logged when the run ended (less than asked for when capped). */
  readMb: number;
  capped: boolean;
}

function orZero(read: () => number): number {
  try {
    return read();
  } catch {
    return 0;
  }
}

/** One run of ralph with an agent printing `mb` megabytes in the shape `mode`. */
async function peakRss(project: string, id: string, mode: Mode, mb: number): Promise<MemoryRun> {
  const rssFile = join(project, `${id}.rss`);
  const agent = [process.execPath, fixture("stream-agent"), mode, String(mb)];
  const extra: Record<string, string> = { BENCH_RSS_FILE: rssFile };
  let args: string[];
  if (mode === "json") {
    const bin = join(project, `${id}-claude`);
    writeFileSync(bin, `#!/bin/sh\nexec ${agent.map((word) => `'${word}'`).join(" ")}\n`, { mode: 0o755 });
    extra.RALPH_CLAUDE_BIN = bin;
    args = ["run", "--name", id, "-n", "1", "--agent", "claude", "memory"];
  } else {
    args = ["run", "--name", id, "-n", "1", "memory", "--", ...agent];
  }
  const started = nowMs();
  const ralph = startRalph(args, project, {
    env: cleanEnv(extra),
    nodeArgs: ["--import", pathToFileURL(fixture("report-rss")).href],
  });
  let sampled = 0;
  const timer = setInterval(() => {
    sampled = Math.max(sampled, statusKb(ralph.child.pid as number, "VmHWM") ?? 0);
  }, 25);
  let capped = false;
  const cap = setTimeout(() => {
    capped = true;
    ralph.child.kill("SIGTERM");
  }, CAP_MS);
  const exit = await ralph.exited;
  clearInterval(timer);
  clearTimeout(cap);
  if (!capped && exit.code !== 3)
    throw new Error(`memory ${mode}: ralph exit ${exit.code ?? exit.signal} (expected 3, MAX_ITERATIONS)`);
  // A run killed by its signal never reaches the exit hook: then the sampled figure is all there is.
  const atExit = orZero(() => Number(readFileSync(rssFile, "utf8")));
  const logged = orZero(() => statSync(join(runDir(project, id), "iter-001.log")).size);
  // The run's logs hold the whole output: do not keep gigabytes around.
  rmSync(runDir(project, id), { recursive: true, force: true });
  return {
    peakMb: Math.max(atExit, sampled) / 1024,
    seconds: (exit.at - started) / 1000,
    readMb: logged / 2 ** 20,
    capped,
  };
}

/** Measures every output shape `runs` times, each next to a run with no output. */
export async function benchMemory(runs: number, log: (line: string) => void): Promise<Row[]> {
  const project = scratchDir("memory");
  const samples = new Samples();
  const cappedAt = new Map<Mode, MemoryRun>();
  let counter = 0;
  for (let round = 0; round < runs; round++) {
    for (const { mode } of MODES) {
      if (cappedAt.has(mode)) continue;
      const idle = await retryOnce(`memory ${mode}`, () => peakRss(project, `m-${++counter}`, mode, 0), log);
      const busy = await retryOnce(`memory ${mode}`, () => peakRss(project, `m-${++counter}`, mode, MB), log);
      samples.add(`${mode}.idle`, idle.peakMb);
      samples.add(`${mode}.busy`, busy.peakMb);
      samples.add(`${mode}.throughput`, busy.readMb / busy.seconds);
      if (busy.capped) cappedAt.set(mode, busy);
      log(
        `memory: ${mode} round ${round + 1}/${runs}: ${busy.peakMb.toFixed(0)} MB peak, ${busy.readMb.toFixed(0)} MB in ${busy.seconds.toFixed(1)} s`,
      );
    }
  }
  return MODES.map(({ mode, label }) => {
    const value = samples.get(`${mode}.busy`);
    const idle = samples.get(`${mode}.idle`);
    const throughput = samples.get(`${mode}.throughput`);
    const capped = cappedAt.get(mode);
    const speed = throughput
      ? `ralph read ${throughput.median.toFixed(1)} MB/s (${throughput.min.toFixed(1)}–${throughput.max.toFixed(1)})`
      : "";
    const note = capped
      ? `NOT FINISHED: stopped after ${CAP_MS / 1000} s with ${capped.readMb.toFixed(0)} of ${MB} MB read (${speed}); measured once`
      : speed;
    return {
      group: `Memory, ${MB} MB of agent output`,
      figure: `peak RSS of ralph, ${label}`,
      unit: "MB",
      value,
      ...(idle ? { baseline: { label: "same run, no output", value: idle } } : {}),
      target: `≤ ${TARGET_RATIO}× no output`,
      met: value && idle && !capped ? value.median <= idle.median * TARGET_RATIO : capped ? false : null,
      note,
      command:
        mode === "json"
          ? `RALPH_CLAUDE_BIN=<streams ${MB} MB of stream-json> ralph run -n 1 x`
          : `ralph run -n 1 x -- <prints ${MB} MB of ${mode === "raw" ? "random bytes" : "x without a newline"}>`,
    };
  });
}
