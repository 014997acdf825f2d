// Running the built ralph CLI from the benchmarks, in throwaway project directories.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { nowMs } from "./stats.js";

/** The built CLI entry point (BENCH_RALPH: another build's, to measure it with every suite). */
export const RALPH = process.env.BENCH_RALPH ?? fileURLToPath(new URL("../src/cli/main.cjs", import.meta.url));

/** A compiled benchmark fixture under dist/bench/fixtures. */
export function fixture(name: string): string {
  return fileURLToPath(new URL(`./fixtures/${name}.js`, import.meta.url));
}

/**
 * Variables that make every Node process start slower on the machine that sets them, whatever it runs:
 * NODE_EXTRA_CA_CERTS has Node parse a certificate bundle before any script (about 30 ms a start where it
 * was measured, twice a plain `node -e 0`), a cost of that machine's, not of ralph's, that would hide
 * ralph's own start-up in every ratio to `node -e 0`.
 */
const MACHINE_COSTS = new Set(["NODE_EXTRA_CA_CERTS"]);

/**
 * Environment for ralph: no RALPH_* settings leak in from the caller, nor the machine's start-up costs. The
 * sandbox is off unless a suite asks for it (RALPH_SANDBOX, or --sandbox, which outranks it): the figures are
 * ralph's own, comparable with builds from before the sandbox was on by default, and the sandbox suite
 * measures what it adds.
 */
export function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { RALPH_SANDBOX: "off" };
  for (const [key, value] of Object.entries(process.env))
    if (
      (!key.startsWith("RALPH_") || key === "RALPH_SUPERVISION" || key === "RALPH_SANDBOX") &&
      !MACHINE_COSTS.has(key)
    )
      env[key] = value;
  return { ...env, ...extra };
}

const scratch: string[] = [];

/** A fresh temp directory, removed by `removeScratch` (also on the way out of the benchmark). */
export function scratchDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), `ralph-bench-${prefix}-`));
  scratch.push(dir);
  return dir;
}

/** Removes one scratch directory, or all of them. */
export function removeScratch(dir?: string): void {
  for (const entry of dir === undefined ? scratch.splice(0) : scratch.splice(scratch.indexOf(dir), 1)) {
    rmSync(entry, { recursive: true, force: true });
  }
}

/** A started process and how it ends. */
export interface Started {
  child: ChildProcess;
  /** Resolves at exit with the code or signal, the nowMs() it was seen at, and the end of its stderr. */
  exited: Promise<Exit>;
}

/** How a started process ended. */
export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
  at: number;
  stderr: string;
}

const children = new Set<ChildProcess>();

/** Starts `node ralph ARGS` (or `node NODE_ARGS ralph ARGS`) in `cwd`, output discarded. */
export function startRalph(
  args: string[],
  cwd: string,
  options: { env?: NodeJS.ProcessEnv; nodeArgs?: string[] } = {},
): Started {
  return startNode([...(options.nodeArgs ?? []), RALPH, ...args], cwd, options.env ?? cleanEnv());
}

/** Starts `node ARGS` in `cwd` with output discarded; tracked so an aborted benchmark can end it. */
export function startNode(args: string[], cwd: string, env: NodeJS.ProcessEnv = cleanEnv()): Started {
  return startProcess(process.execPath, args, cwd, env);
}

/** Starts any program with output discarded; tracked so an aborted benchmark can end it. */
export function startProcess(
  program: string,
  args: string[],
  cwd: string,
  env: NodeJS.ProcessEnv = cleanEnv(),
): Started {
  const child = spawn(program, args, { cwd, env, stdio: ["ignore", "ignore", "pipe"] });
  children.add(child);
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => (stderr = (stderr + chunk.toString("utf8")).slice(-4096)));
  const exited = new Promise<Exit>((resolve, reject) => {
    child.once("error", reject);
    child.once("exit", (code, signal) => {
      const at = nowMs();
      children.delete(child);
      resolve({ code, signal, at, stderr });
    });
  });
  return { child, exited };
}

/** Runs a program to its end and returns the wall time from spawn to exit (ms). */
export async function timeProcess(
  program: string,
  args: string[],
  cwd: string,
  env?: NodeJS.ProcessEnv,
  expectCode = 0,
): Promise<number> {
  const started = nowMs();
  const { exited } = startProcess(program, args, cwd, env);
  const { code, signal, at, stderr } = await exited;
  if (code !== expectCode)
    throw new Error(`${program} ${args.join(" ")}: exit ${code ?? signal} (expected ${expectCode}): ${stderr}`);
  return at - started;
}

/** SIGKILLs every process this module started that is still running (by pid). */
export function killStarted(): void {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
}

/** A run's events.jsonl. */
export function readEvents(runDir: string): Array<Record<string, unknown>> {
  return readFileSync(join(runDir, "events.jsonl"), "utf8")
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** The wall-clock time (ms) of the first event matching `match`, or null. */
export function eventTime(
  events: Array<Record<string, unknown>>,
  match: (event: Record<string, unknown>) => boolean,
): number | null {
  const event = events.find(match);
  return event && typeof event.ts === "string" ? Date.parse(event.ts) : null;
}

/** The directory of run `id` in project `dir`. */
export function runDir(dir: string, id: string): string {
  return join(dir, ".ralph", "runs", id);
}

/** The builds to measure: this one, and BENCH_BEFORE's when given. */
export function builds(): Array<{ label: string; main: string }> {
  const before = process.env.BENCH_BEFORE;
  return [{ label: "", main: RALPH }, ...(before ? [{ label: " (before)", main: before }] : [])];
}

/**
 * Preloaded (node --require) into each process measured for its CPU time: at exit, writes the CPU time the
 * process used (user + system, µs, bootstrap included) to $BENCH_CPU_FILE, a figure the machine's load
 * barely moves. CommonJS, so that it sets up nothing of its own: an ES module preload would have Node set
 * up its ES module loader in every process measured (node -e 0 included), the very cost a CommonJS entry
 * avoids.
 */
const CPU_REPORTER = `const { writeFileSync } = require("node:fs");
process.on("exit", () => {
  const { user, system } = process.cpuUsage();
  writeFileSync(process.env.BENCH_CPU_FILE, String(user + system));
});
`;

/** Writes the CPU-time reporter into `dir`; returns the node arguments that preload it. */
export function cpuReporter(dir: string): string[] {
  const file = join(dir, "report-cpu.cjs");
  writeFileSync(file, CPU_REPORTER);
  return ["--require", file];
}
