// The program a person's command runs, pinned when the run starts: a script named by path (`./notify.sh`,
// `node scripts/review.mjs`) is read then, and a command whose script's bytes have changed since (or that was not
// there then) is not run.
import { isAbsolute, relative, resolve } from "node:path";
import { fileDigest } from "./file-digest.js";

/** Interpreters whose first argument is the script they run. */
const INTERPRETERS = new Set([
  "sh",
  "bash",
  "dash",
  "zsh",
  "node",
  "nodejs",
  "python",
  "python3",
  "perl",
  "ruby",
  "deno",
  "bun",
  "tsx",
]);

/** A pinned script: its path and the sha256 of its bytes when the run started (null: no regular file was there then). */
export interface PinnedProgram {
  path: string;
  sha256: string | null;
}

/**
 * The digests of the scripts a run's commands run, taken when the run was created (before any agent ran) and
 * kept in the runner's record: each script's path relative to the directory it was found under, and its sha256.
 */
export type PinTable = Record<string, string | null>;

/** The script `argv` runs (its first word when that is a path, else an interpreter's first argument), when it is a path under `root`. */
function scriptOf(argv: readonly string[], cwd: string, root: string): { path: string; key: string } | null {
  const [first, second] = argv;
  if (first === undefined) return null;
  const interpreted = INTERPRETERS.has(first.split("/").pop() ?? "");
  const name = interpreted
    ? second !== undefined && !second.startsWith("-")
      ? second
      : null
    : first.includes("/")
      ? first
      : null;
  if (name === null) return null;
  const path = resolve(cwd, name);
  const key = relative(resolve(root), path);
  if (key.startsWith("..") || isAbsolute(key)) return null;
  return { path, key };
}

/**
 * The pin of the script `argv` runs from under `root`: its digest in `recorded` (the run's record, taken when
 * the run was created) when that has it, else its digest now.
 */
export function pinProgram(
  argv: readonly string[],
  cwd: string,
  root: string,
  recorded: PinTable = {},
): PinnedProgram | null {
  const script = scriptOf(argv, cwd, root);
  if (script === null) return null;
  return {
    path: script.path,
    sha256: Object.hasOwn(recorded, script.key) ? (recorded[script.key] ?? null) : fileDigest(script.path),
  };
}

/** The digests now of the scripts that `commands` (run in `cwd`) run from under `root`: what a new run's record keeps. */
export function pinTable(commands: ReadonlyArray<readonly string[]>, cwd: string, root: string): PinTable {
  const table: PinTable = {};
  for (const argv of commands) {
    const script = scriptOf(argv, cwd, root);
    // A script not there yet is pinned too: one the agent writes there later is not the person's.
    if (script) table[script.key] = fileDigest(script.path);
  }
  return table;
}

/** The first words of a shell command line (enough to find the program it runs; quotes stripped, stops at an operator). */
export function leadingWords(line: string): string[] {
  const words: string[] = [];
  for (const match of line.trim().matchAll(/"([^"]*)"|'([^']*)'|([^\s"';|&<>()]+)|([;|&<>()])/g)) {
    if (match[4] !== undefined) break;
    words.push(match[1] ?? match[2] ?? match[3] ?? "");
    if (words.length === 2) break;
  }
  return words;
}

/** Why a pinned script may not run now (its bytes changed, it is gone, or it appeared), or null when it is as it was. */
export function pinBroken(pin: PinnedProgram | null): string | null {
  if (pin === null) return null;
  const now = fileDigest(pin.path);
  if (now === pin.sha256) return null;
  if (pin.sha256 === null) return `${pin.path} was not there when the run started`;
  return now === null ? `${pin.path} is gone since the run started` : `${pin.path} changed since the run started`;
}
