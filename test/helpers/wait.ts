// Waiting in tests, one way: `waitFor` checks a probe until it yields a value, woken by what it watches (a
// file's directory, a stream, a promise) or else polled briefly, and fails after its bound naming what it
// awaited and for how long. Every other wait here is a probe and a wake source for it.
import { existsSync, watch } from "node:fs";
import { dirname } from "node:path";

/** What a probe returns while the awaited thing has not happened yet. */
export type NotYet = null | undefined | false;

/** Calls `wake` whenever the awaited thing may have happened; returns how to stop, or null when it cannot watch. */
export type WakeSource = (wake: () => void) => (() => void) | null;

/** How often the probe is polled without a wake source, and as a backstop with one. */
const POLL_MS = 10;
const BACKSTOP_MS = 250;

/**
 * Resolves with the first value of `probe` that is not null, undefined or false. The probe runs at once, on
 * every wake of `source`, and every 10 ms (every 250 ms while `source` watches). Rejects with what the probe
 * throws, or after `timeoutMs` with an error naming `what` (a function is read only then, to show late state).
 */
export function waitFor<T>(
  probe: () => T | NotYet,
  what: string | (() => string),
  timeoutMs = 20_000,
  source?: WakeSource,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let done = false;
    let poll: NodeJS.Timeout | undefined;
    let stop: (() => void) | null = null;
    const finish = (settle: () => void): void => {
      done = true;
      clearTimeout(poll);
      clearTimeout(bound);
      stop?.();
      settle();
    };
    const check = (): void => {
      if (done) return;
      try {
        const value = probe();
        if (value !== null && value !== undefined && value !== false) finish(() => resolve(value));
      } catch (error) {
        finish(() => reject(error));
      }
    };
    const bound = setTimeout(() => {
      check();
      if (!done)
        finish(() =>
          reject(new Error(`timed out after ${timeoutMs} ms waiting for ${typeof what === "string" ? what : what()}`)),
        );
    }, timeoutMs);
    stop = source?.(check) ?? null;
    const tick = (): void => {
      check();
      if (!done) poll = setTimeout(tick, stop ? BACKSTOP_MS : POLL_MS);
    };
    tick();
  });
}

/** Wakes a wait on every change in the directory holding `path` (none when that directory is not there yet). */
export function fileChanges(path: string): WakeSource {
  return (wake) => {
    try {
      const watcher = watch(dirname(path), wake);
      watcher.on("error", () => undefined);
      return () => watcher.close();
    } catch {
      return null;
    }
  };
}

/** Resolves once `path` exists. */
export async function waitForFile(path: string, timeoutMs?: number): Promise<void> {
  await waitFor(() => existsSync(path), path, timeoutMs, fileChanges(path));
}

/** Resolves with the rest of the first complete line of `stream` starting with `prefix`; rejects if the stream ends first. */
export function waitForLine(stream: NodeJS.ReadableStream, prefix: string, timeoutMs = 20_000): Promise<string> {
  let buffer = "";
  let ended = false;
  const line = (): string | null => {
    // Only complete lines: the last piece may be cut mid-line.
    for (const whole of buffer.split("\n").slice(0, -1))
      if (whole.startsWith(prefix)) return whole.slice(prefix.length);
    if (ended) throw new Error(`output ended before "${prefix}": ${buffer}`);
    return null;
  };
  return waitFor(
    line,
    () => `a "${prefix}" line; output so far: ${buffer}`,
    timeoutMs,
    (wake) => {
      const onData = (chunk: Buffer): void => {
        buffer += chunk.toString("utf8");
        wake();
      };
      const onEnd = (): void => {
        ended = true;
        wake();
      };
      stream.on("data", onData);
      stream.once("end", onEnd);
      return () => {
        stream.off("data", onData);
        stream.off("end", onEnd);
      };
    },
  );
}

/** The promise's value (or its rejection), or a rejection naming `what` once `timeoutMs` have passed. */
export async function within<T>(promise: Promise<T>, timeoutMs: number, what: string): Promise<T> {
  let outcome: { value: T } | { error: unknown } | null = null;
  const settled = await waitFor(
    () => {
      if (outcome && "error" in outcome) throw outcome.error;
      return outcome;
    },
    what,
    timeoutMs,
    (wake) => {
      promise.then(
        (value) => ((outcome = { value }), wake()),
        (error: unknown) => ((outcome = { error }), wake()),
      );
      return () => undefined;
    },
  );
  return settled.value;
}
