#!/usr/bin/env node
// The ralph command: parses argv, runs one subcommand, and turns its outcome into an exit code.
import "./no-inspector.js";
import "./small-young-generation.js";
import { CommanderError } from "commander";
import { dashedName } from "./run-flags.js";
import { buildProgram } from "./program.js";
import { UsageError } from "./usage-error.js";
import { sayFailure } from "./failure-exit.js";
import { isContainerInit, runUnderReaper } from "../process/pid1.js";

/** Runs ralph with `argv` (without node and script) and resolves to the exit code. */
export async function main(argv: string[]): Promise<number> {
  const split = argv.indexOf("--");
  const trailing = split === -1 ? null : argv.slice(split + 1);
  const words = split === -1 ? argv : argv.slice(0, split);
  let pending: Promise<number> | null = null;
  // Commands load their modules only when run, so that start-up (and every Stop hook call) stays quick.
  const hook = words[0] === "hook" ? await import("./commands/hook.js") : null;
  const program = buildProgram(trailing, (code) => (pending = code), hook);
  if (argv.length === 0) {
    process.stdout.write(program.helpInformation());
    return 0;
  }
  try {
    const dashed = words[0] === "run" ? dashedName(words) : null;
    if (dashed) throw new UsageError(dashed);
    await program.parseAsync(words, { from: "user" });
    if (!pending) {
      process.stdout.write(program.helpInformation());
      return words.length === 0 ? 0 : 2;
    }
    return await pending;
  } catch (error) {
    return reportError(error);
  }
}

function reportError(error: unknown): number {
  if (error instanceof CommanderError) {
    if (
      error.code === "commander.helpDisplayed" ||
      error.code === "commander.version" ||
      error.code === "commander.help"
    ) {
      return 0;
    }
    // Commander puts its "did you mean" on a line of its own: keep the error to one line.
    const message = error.message
      .replace(/^error: /, "")
      .replace(/\s*\n\(Did you mean (.*)\?\)\s*$/, " (did you mean $1?)");
    process.stderr.write(`ralph: ${message}${error.code === "commander.unknownCommand" ? "; see ralph --help" : ""}\n`);
    return 2;
  }
  const said = sayFailure(error);
  process.stderr.write(`ralph: ${said.line}\n`);
  return said.code;
}

// A reader that closes the pipe early (`ralph run --help | head -1`) is no error of ralph's: stop writing
// to it quietly. Any other stream error stays fatal as before.
function ignoreClosedPipe(error: NodeJS.ErrnoException): void {
  if (error.code !== "EPIPE" && error.code !== "ERR_STREAM_DESTROYED") throw error;
}
process.stdout.on("error", ignoreClosedPipe);
process.stderr.on("error", ignoreClosedPipe);

// PID 1 of a container cannot reap the orphans that reparent to it from Node: run
// ralph as the child of a reaper instead (src/process/pid1.ts).
async function start(argv: string[]): Promise<number> {
  if (isContainerInit()) {
    const reaped = await runUnderReaper([process.execPath, ...process.execArgv, ...process.argv.slice(1)]);
    if (reaped.kind === "exited") return reaped.exitCode;
    process.stderr.write(
      `ralph: running as PID 1 without a reaper (${reaped.message}): orphaned processes may stay as zombies\n`,
    );
  }
  return main(argv);
}

start(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  // A failure nothing above caught: said as every other (cli/failure-exit.ts), without a stack.
  (error: unknown) => {
    const said = sayFailure(error, false);
    process.stderr.write(`ralph: ${said.line}\n`);
    process.exitCode = said.code;
  },
);
