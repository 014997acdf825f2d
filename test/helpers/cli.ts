// Helpers for e2e tests: run the built ralph CLI in a temp project and read what it left behind.
import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { after } from "node:test";
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/** The built CLI entry point. */
export const RALPH = fileURLToPath(new URL("../../src/cli/main.cjs", import.meta.url));
/** The built fake agent. */
export const FAKE_AGENT = fileURLToPath(new URL("../fixtures/fake-agent.js", import.meta.url));

/** What a finished ralph process did. */
export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** A fresh empty project directory, removed by the returned cleanup. */
export function tempProject(prefix = "ralph-e2e-"): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Environment for ralph under test: no RALPH_* settings leak in from the caller, except the forced supervision mode. */
export function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env))
    if (!key.startsWith("RALPH_") || key === "RALPH_SUPERVISION") env[key] = value;
  // `ralph run` is sandboxed by default; tests not about the sandbox run without it (the default itself is
  // covered by e2e/sandbox-default). RALPH_SANDBOX: "" leaves the choice to ralph.yaml and the default.
  const merged: NodeJS.ProcessEnv = { ...env, RALPH_SANDBOX: "off", ...extra };
  if (merged.RALPH_SANDBOX === "") delete merged.RALPH_SANDBOX;
  return merged;
}

/** Collects a child's output; resolves on 'close' with it and how the child ended. */
export function resultOf(child: ChildProcess): Promise<CliResult> {
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
  child.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
  return new Promise<CliResult>((resolve) =>
    child.on("close", (code, signal) => resolve({ code, signal, stdout, stderr })),
  );
}

/** Starts ralph with `args` in `cwd`; the caller must await `done`. */
export function startRalph(
  args: string[],
  cwd: string,
  env: NodeJS.ProcessEnv = cleanEnv(),
): { child: ChildProcess; done: Promise<CliResult> } {
  const child = spawn(process.execPath, [RALPH, ...args], { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
  return { child, done: resultOf(child) };
}

/** Awaits a started process, SIGKILLing it after `timeoutMs` (the caller then sees the signal). */
export async function finishWithin(
  started: { child: ChildProcess; done: Promise<CliResult> },
  timeoutMs: number,
): Promise<CliResult> {
  const timer = setTimeout(() => started.child.kill("SIGKILL"), timeoutMs);
  try {
    return await started.done;
  } finally {
    clearTimeout(timer);
  }
}

/** Runs ralph to completion, killing it (and failing) after `timeoutMs`. */
export function runRalph(args: string[], cwd: string, env?: NodeJS.ProcessEnv, timeoutMs = 60_000): Promise<CliResult> {
  return finishWithin(startRalph(args, cwd, env), timeoutMs);
}

/** Asserts that ralph refused its input: exit 2 and one line of stderr matching `pattern`, no stack trace. */
export function assertOneLineUsageError(result: { code: number | null; stderr: string }, pattern: RegExp): void {
  assert.equal(result.code, 2, result.stderr);
  assert.match(result.stderr, pattern);
  assert.equal(result.stderr.trimEnd().split("\n").length, 1, result.stderr);
  assert.doesNotMatch(result.stderr, /internal error|\n\s+at /);
}

/** The single run directory of a project. */
export function onlyRunDir(projectDir: string): string {
  const runs = join(projectDir, ".ralph", "runs");
  const ids = readdirSync(runs);
  if (ids.length !== 1) throw new Error(`expected one run in ${runs}, found ${ids.length}`);
  return join(runs, ids[0] as string);
}

/** The lines of a run's progress.txt. */
export function progressLines(runDir: string): string[] {
  return readFileSync(join(runDir, "progress.txt"), "utf8").trimEnd().split("\n");
}

/** The last two lines of progress.txt, i.e. the completion marker when the run has ended. */
export function completionMarker(runDir: string): string[] {
  return progressLines(runDir).slice(-2);
}

/** A run's status.json. */
export function readStatus(runDir: string): Record<string, unknown> {
  return JSON.parse(readFileSync(join(runDir, "status.json"), "utf8")) as Record<string, unknown>;
}

/** A run's events. */
export function readEvents(runDir: string): Array<Record<string, unknown>> {
  return readFileSync(join(runDir, "events.jsonl"), "utf8")
    .trimEnd()
    .split("\n")
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** Environment whose `claude` is a wrapper around the fake agent printing stream-json with `args`. */
export function fakeClaudeEnv(dir: string, ...args: string[]): NodeJS.ProcessEnv {
  const bin = join(dir, "fake-claude");
  const quoted = [process.execPath, FAKE_AGENT, "--stream-json", ...args].map((word) => `'${word}'`).join(" ");
  writeFileSync(bin, `#!/bin/sh\nexec ${quoted}\n`, { mode: 0o755 });
  return cleanEnv({ RALPH_CLAUDE_BIN: bin });
}

/** argv after `--` that runs the fake agent with `args` as the command agent. */
export function fakeAgent(...args: string[]): string[] {
  return ["--", process.execPath, FAKE_AGENT, ...args];
}

/** Whether a process is running (zombies count as dead). */
export function processAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
    return state !== "Z" && state !== "X";
  } catch {
    return false;
  }
}

/** A maker of temp project directories, all removed after the calling test file's tests. */
export function tempProjects(prefix: string): () => string {
  const cleanups: Array<() => void> = [];
  after(() => cleanups.forEach((cleanup) => cleanup()));
  return () => {
    const { dir, cleanup } = tempProject(prefix);
    cleanups.push(cleanup);
    return dir;
  };
}

/** A starter of ralph processes in a project, each SIGKILLed (if still running) after the calling test file's tests. */
export function trackedStarts(): (dir: string, args: string[]) => { child: ChildProcess; done: Promise<CliResult> } {
  const children: ChildProcess[] = [];
  after(() => children.forEach((child) => child.kill("SIGKILL")));
  return (dir, args) => {
    const started = startRalph(args, dir);
    children.push(started.child);
    return started;
  };
}

/** argv after `--` for a command agent that runs `script` with sh first, then the fake agent with `args`. */
export function agentAfter(script: string, ...args: string[]): string[] {
  return ["--", "sh", "-c", `${script}; exec "$0" "$@"`, process.execPath, FAKE_AGENT, ...args];
}

/** Environment whose `claude` is the spend fixture (test/fixtures/spend-agent.ts), set up by `extra` (SPEND_*). */
export function spendAgentEnv(dir: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const bin = join(dir, "spend-claude");
  writeFileSync(
    bin,
    `#!/bin/sh\nexec '${process.execPath}' '${fileURLToPath(new URL("../fixtures/spend-agent.js", import.meta.url))}' "$@"\n`,
    { mode: 0o755 },
  );
  return cleanEnv({
    GIT_CONFIG_GLOBAL: process.env.GIT_CONFIG_GLOBAL ?? "",
    GIT_CONFIG_NOSYSTEM: "1",
    RALPH_CLAUDE_BIN: bin,
    ...extra,
  });
}
