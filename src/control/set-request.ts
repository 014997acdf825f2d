// The channel of `ralph set` to a live runner: a request file in the run's requests directory, answered by a
// result file there. A directory of their own: the runner looks for requests twice an iteration, and the run
// directory grows by a log per iteration.
import { mkdirSync, readdirSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import { writeFileAtomic } from "../store/atomic-write.js";
import { readRegular } from "../store/regular-file.js";

/** A request: the `key=value` words, and who asked (the runner checks that process). */
export interface SetRequest {
  words: string[];
  pid: number;
  pid_start: string | null;
}

/** The runner's answer to a request. */
export interface SetResult {
  ok: boolean;
  message: string;
}

const REQUEST = /^set-([0-9a-z]+-[0-9a-f]+)\.request\.json$/;

/** Writes a request atomically into requests directory `dir` (made if missing); returns its name (the key of its result). */
export function writeSetRequest(dir: string, request: SetRequest, nonce: string): string {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const name = `${process.pid.toString(36)}-${nonce}`;
  writeFileAtomic(join(dir, `set-${name}.request.json`), `${JSON.stringify(request)}\n`);
  return name;
}

/** Pending requests of requests directory `dir`, oldest name first; an unreadable one comes with a null request. */
export function pendingSetRequests(dir: string): Array<{ name: string; request: SetRequest | null }> {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const pending: Array<{ name: string; request: SetRequest | null }> = [];
  for (const entry of names.sort()) {
    const name = REQUEST.exec(entry)?.[1];
    if (!name) continue;
    let request: SetRequest | null = null;
    try {
      const value = JSON.parse(readRegular(join(dir, entry), 64 * 1024).toString("utf8")) as SetRequest;
      if (
        Array.isArray(value.words) &&
        value.words.every((w) => typeof w === "string") &&
        Number.isSafeInteger(value.pid)
      )
        request = value;
    } catch {
      request = null;
    }
    pending.push({ name, request });
  }
  return pending;
}

/** Answers request `name`: writes its result, then removes the request. */
export function answerSetRequest(dir: string, name: string, result: SetResult): void {
  writeFileAtomic(join(dir, `set-${name}.result.json`), `${JSON.stringify(result)}\n`);
  removeQuietly(join(dir, `set-${name}.request.json`));
}

/** The answer to request `name`, once there (the result file is removed when read). */
export function takeSetResult(dir: string, name: string): SetResult | null {
  const file = join(dir, `set-${name}.result.json`);
  try {
    const value = JSON.parse(readRegular(file, 64 * 1024).toString("utf8")) as SetResult;
    removeQuietly(file);
    return value;
  } catch {
    return null;
  }
}

/** Withdraws a request nobody answered. */
export function withdrawSetRequest(dir: string, name: string): void {
  removeQuietly(join(dir, `set-${name}.request.json`));
}

/** Whether a directory entry name is a request (the runner watches for these). */
export function isSetRequestName(entry: string): boolean {
  return REQUEST.test(entry);
}

function removeQuietly(file: string): void {
  try {
    unlinkSync(file);
  } catch {
    // Already gone.
  }
}
