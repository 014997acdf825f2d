// Event log size: events.jsonl bytes per byte of agent output, for each output shape (target: at most 2×).
import { rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cleanEnv, fixture, runDir, scratchDir, startRalph } from "./ralph-cli.js";
import type { Row } from "./report.js";
import { retryOnce, Samples } from "./stats.js";

const MB = 10;
const TARGET = 2;
/** The shapes: how the agent prints MB megabytes, as an argv, and whether it speaks Claude Code's stream-json. */
const SHAPES = [
  { shape: "lines", label: "short lines (`yes`)", argv: ["sh", "-c", `yes | head -c ${MB * 2 ** 20}`], claude: false },
  { shape: "empty", label: "empty lines", argv: ["sh", "-c", `yes '' | head -c ${MB * 2 ** 20}`], claude: false },
  {
    shape: "flat",
    label: "one long line",
    argv: [process.execPath, fixture("stream-agent"), "flat", String(MB)],
    claude: false,
  },
  {
    shape: "raw",
    label: "random bytes",
    argv: [process.execPath, fixture("stream-agent"), "raw", String(MB)],
    claude: false,
  },
  {
    shape: "json",
    label: "stream-json (claude adapter)",
    argv: [process.execPath, fixture("stream-agent"), "json", String(MB)],
    claude: true,
  },
] as const;

/** One run: the bytes of events.jsonl and of iter-001.log (the agent's output, as logged). */
async function measure(
  project: string,
  id: string,
  shape: (typeof SHAPES)[number],
): Promise<{ events: number; output: number }> {
  const env: Record<string, string> = {};
  let args: string[];
  if (shape.claude) {
    const bin = join(project, `${id}-claude`);
    writeFileSync(bin, `#!/bin/sh\nexec ${shape.argv.map((word) => `'${word}'`).join(" ")}\n`, { mode: 0o755 });
    env.RALPH_CLAUDE_BIN = bin;
    args = ["run", "--name", id, "-n", "1", "--agent", "claude", "size"];
  } else {
    args = ["run", "--name", id, "-n", "1", "size", "--", ...shape.argv];
  }
  const exit = await startRalph(args, project, { env: cleanEnv(env) }).exited;
  if (exit.code !== 3)
    throw new Error(`event size ${shape.shape}: ralph exit ${exit.code ?? exit.signal} (expected 3, MAX_ITERATIONS)`);
  const dir = runDir(project, id);
  const sizes = { events: statSync(join(dir, "events.jsonl")).size, output: statSync(join(dir, "iter-001.log")).size };
  rmSync(dir, { recursive: true, force: true });
  return sizes;
}

/** Measures every shape `runs` times. */
export async function benchEventSize(runs: number, log: (line: string) => void): Promise<Row[]> {
  const project = scratchDir("events");
  const samples = new Samples();
  let counter = 0;
  for (let round = 0; round < runs; round++) {
    for (const shape of SHAPES) {
      const sizes = await retryOnce(`event size ${shape.shape}`, () => measure(project, `e-${++counter}`, shape), log);
      samples.add(shape.shape, sizes.events / sizes.output);
      log(
        `event size: ${shape.shape} round ${round + 1}/${runs}: ${sizes.events} bytes of events for ${sizes.output} bytes of output`,
      );
    }
  }
  return SHAPES.map(({ shape, label }) => {
    const value = samples.get(shape);
    return {
      group: `Event log, ${MB} MB of agent output`,
      figure: `events.jsonl bytes per byte of output, ${label}`,
      unit: "×",
      value,
      target: `≤ ${TARGET}×`,
      met: value ? value.max <= TARGET : null,
      command: `ralph run -n 1 x -- <prints ${MB} MB of ${label}>`,
    };
  });
}
