// The program a person's command runs, pinned when the run starts: a script named by path (`./notify.sh`,
// `node scripts/review.mjs`) is read then, and a command whose script's bytes have changed since is not run.
import { createHash } from "node:crypto";
import { lstatSync, readFileSync } from "node:fs";
import { isAbsolute, relative, resolve } from "node:path";

/** Interpreters whose first argument is the script they run. */
const INTERPRETERS = new Set(["sh", "bash", "dash", "zsh", "node", "nodejs", "python", "python3", "perl", "ruby", "deno", "bun", "tsx"]);

/** A pinned script: its path and the sha256 of its bytes when the run started (null: none to pin). */
export interface PinnedProgram {
  path: string;
  sha256: string;
}

function digest(path: string): string | null {
  try {
    if (!lstatSync(path).isFile()) return null;
    return createHash("sha256").update(readFileSync(path)).digest("hex");
  } catch {
    return null;
  }
}

/** The script `argv` runs (its first word when that is a path, else an interpreter's first argument), when it is a file under `root`. */
export function pinProgram(argv: readonly string[], cwd: string, root: string): PinnedProgram | null {
  const [first, second] = argv;
  if (first === undefined) return null;
  const interpreted = INTERPRETERS.has(first.split("/").pop() ?? "");
  const name = interpreted ? (second !== undefined && !second.startsWith("-") ? second : null) : first.includes("/") ? first : null;
  if (name === null) return null;
  const path = resolve(cwd, name);
  const inside = relative(resolve(root), path);
  if (inside.startsWith("..") || isAbsolute(inside)) return null;
  const sha256 = digest(path);
  return sha256 === null ? null : { path, sha256 };
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

/** Why a pinned script may not run now (its bytes changed, or it is gone), or null when it is as it was. */
export function pinBroken(pin: PinnedProgram | null): string | null {
  if (pin === null) return null;
  const now = digest(pin.path);
  if (now === pin.sha256) return null;
  return now === null ? `${pin.path} is gone since the run started` : `${pin.path} changed since the run started`;
}
