// The spend ledger: ralph's own record of what every agent call cost, kept beside the runner's ledger in the
// user's state directory (`$XDG_STATE_HOME/ralph/spend`, 0700), never in the project or a run directory,
// where an agent works. `days/YYYY-MM-DD.jsonl` (UTC days) holds one append-only line per agent call;
// `runs/<digest>.json` one record per run with the budgets it started with. (An agent runs as the same
// user, so it could write here too; `--sandbox` hides the state directory from it.)
import {
  chmodSync,
  closeSync,
  fstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  realpathSync,
} from "node:fs";
import { join, resolve } from "node:path";
import { appendWhole } from "../store/append-whole.js";
import { writeFileAtomic } from "../store/atomic-write.js";
import { requireBuiltin } from "../util/require-builtin.js";
import { sha256Hex } from "../util/sha256.js";
import { parseCall, type SpendCall, type SpendRun } from "./spend-record.js";

/** The spend ledger's directory, from `env` (beside the runner's ledger, src/control/ledger-entry.ts). */
export function spendDir(env: NodeJS.ProcessEnv = process.env): string {
  const base =
    env.XDG_STATE_HOME && env.XDG_STATE_HOME.startsWith("/")
      ? env.XDG_STATE_HOME
      : join(env.HOME || (requireBuiltin("node:os") as typeof import("node:os")).homedir(), ".local", "state");
  return join(base, "ralph", "spend");
}

/** A project directory as the ledger names it: with links resolved. */
export function projectKey(projectDir: string): string {
  try {
    return realpathSync(projectDir);
  } catch {
    return resolve(projectDir);
  }
}

/** The UTC day of a moment, as `YYYY-MM-DD`. */
export function dayOf(at: Date | number | string): string {
  return new Date(at).toISOString().slice(0, 10);
}

function ensureDir(sub: string, env: NodeJS.ProcessEnv): string {
  const top = spendDir(env);
  const dir = join(top, sub);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(top, 0o700);
  return dir;
}

/** Appends one call's spend to the day it ended on. */
export function appendCall(call: SpendCall, env: NodeJS.ProcessEnv = process.env): void {
  const file = join(ensureDir("days", env), `${dayOf(call.at)}.jsonl`);
  // Created 0600 before the first append (openAppend keeps an existing file's mode).
  closeSync(openSync(file, "a", 0o600));
  appendWhole(file, `${JSON.stringify(call)}\n`);
}

function runFile(project: string, run: string, env: NodeJS.ProcessEnv): string {
  return join(spendDir(env), "runs", runFileName(project, run));
}

/** The name of run `run`'s record in the ledger's `runs` directory (`hash`: a sha256 in hex, sha256Hex's by default). */
export function runFileName(project: string, run: string, hash: (text: string) => string = sha256Hex): string {
  return `${hash(`${project}\0${run}`).slice(0, 40)}.json`;
}

/** Records a run and its budgets (replacing what was recorded for it: a continued run may change them). */
export function writeRun(record: SpendRun, env: NodeJS.ProcessEnv = process.env): void {
  ensureDir("runs", env);
  writeFileAtomic(runFile(record.project, record.run, env), `${JSON.stringify(record)}\n`, 0o600, false);
}

/** The record of run `run` of project `project`, or null when the ledger has none. */
export function readRun(project: string, run: string, env: NodeJS.ProcessEnv = process.env): SpendRun | null {
  return readRunFile(runFile(project, run, env), project, run);
}

/** The run record in `file` when it is run `run` of project `project`'s, else null. */
export function readRunFile(file: string, project: string, run: string): SpendRun | null {
  try {
    const value = JSON.parse(readFileSync(file, "utf8")) as SpendRun;
    return value && value.v === 1 && value.kind === "run" && value.run === run && value.project === project
      ? value
      : null;
  } catch {
    return null;
  }
}

/** The days the ledger has calls for, oldest first. */
export function ledgerDays(env: NodeJS.ProcessEnv = process.env): string[] {
  try {
    return readdirSync(join(spendDir(env), "days"))
      .filter((name) => /^\d{4}-\d{2}-\d{2}\.jsonl$/.test(name))
      .map((name) => name.slice(0, 10))
      .sort();
  } catch {
    return [];
  }
}

/**
 * Reads the ledger's calls, day by day, keeping what it has read: a later read of the same days parses
 * only the lines appended since (the files are only ever appended to).
 */
export class SpendReader {
  private readonly files = new Map<string, { size: number; calls: SpendCall[]; rest: string }>();

  constructor(private readonly env: NodeJS.ProcessEnv = process.env) {}

  /** Every call of the days from `fromDay` to `toDay` (both included, `YYYY-MM-DD`). */
  calls(fromDay: string, toDay: string): SpendCall[] {
    const out: SpendCall[] = [];
    for (const { calls } of this.days(fromDay, toDay)) out.push(...calls);
    return out;
  }

  /** The calls of each day from `fromDay` to `toDay` (both included), oldest day first. */
  days(fromDay: string, toDay: string): Array<{ day: string; calls: SpendCall[] }> {
    return ledgerDays(this.env)
      .filter((day) => day >= fromDay && day <= toDay)
      .map((day) => ({ day, calls: this.day(day) }));
  }

  private day(day: string): SpendCall[] {
    const file = join(spendDir(this.env), "days", `${day}.jsonl`);
    let fd: number;
    try {
      fd = openSync(file, "r");
    } catch {
      return [];
    }
    try {
      const size = fstatSync(fd).size;
      let known = this.files.get(day);
      if (!known || size < known.size) known = { size: 0, calls: [], rest: "" };
      if (size > known.size) {
        const bytes = Buffer.alloc(size - known.size);
        let read = 0;
        while (read < bytes.length) {
          const n = readSync(fd, bytes, read, bytes.length - read, known.size + read);
          if (n === 0) break;
          read += n;
        }
        const text = known.rest + bytes.subarray(0, read).toString("utf8");
        const lines = text.split("\n");
        const rest = lines.pop() ?? "";
        const calls = [...known.calls];
        for (const line of lines) {
          const call = parseCall(line);
          if (call) calls.push(call);
        }
        known = { size: known.size + read, calls, rest };
      }
      this.files.set(day, known);
      return known.calls;
    } finally {
      closeSync(fd);
    }
  }
}
