// Turning SIGINT/SIGTERM/SIGHUP/SIGQUIT into abort signals, and dying of a signal at the end.
import { exitCodeFor, type InterruptSignal } from "../exit/exit-reasons.js";

export type { InterruptSignal } from "../exit/exit-reasons.js";

/** The runner's view of interrupting signals. */
export interface SignalWatch {
  /** Aborted on the first SIGINT/SIGTERM/SIGHUP/SIGQUIT; reason = the signal name. */
  interrupted: AbortSignal;
  /** Aborted on a further signal more than DEBOUNCE_MS after the first; the runner is then gone within 1 s. */
  urgent: AbortSignal;
  firstSignal(): InterruptSignal | null;
  /** Removes the listeners (an urgent exit already armed still happens). */
  dispose(): void;
}

const WATCHED: InterruptSignal[] = ["SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT"];
/** Repeats within this window are one signal (GNU timeout sends TERM to the child, then to the group). */
export const DEBOUNCE_MS = 500;
/** After the urgent signal the runner is forced out this long later (under the 1 s promise, with room for the PID 1 fallback). */
export const URGENT_EXIT_MS = 600;
/** When re-raising does not kill us (PID 1 ignores it), exit with 128+n this long later. */
const FALLBACK_EXIT_MS = 100;

const activeWatches = new Set<() => void>();

/**
 * Starts listening for interrupting signals; `beforeForcedExit` runs (synchronously) just before a forced
 * exit, with the signal the runner dies of.
 */
export function watchSignals(beforeForcedExit: (signal: InterruptSignal) => void = () => undefined): SignalWatch {
  const interrupted = new AbortController();
  const urgent = new AbortController();
  let first: InterruptSignal | null = null;
  let firstAt = 0;
  const onSignal = (signal: NodeJS.Signals): void => {
    const name = signal as InterruptSignal;
    if (first === null) {
      first = name;
      firstAt = performance.now();
      interrupted.abort(name);
      return;
    }
    if (urgent.signal.aborted || performance.now() - firstAt <= DEBOUNCE_MS) return;
    urgent.abort(name);
    const dying = first;
    // Teardown must never make the runner unkillable.
    setTimeout(() => {
      try {
        beforeForcedExit(dying);
      } finally {
        dieOfSignal(dying);
      }
    }, URGENT_EXIT_MS).unref();
  };
  for (const signal of WATCHED) process.on(signal, onSignal);
  const dispose = (): void => {
    for (const signal of WATCHED) process.removeListener(signal, onSignal);
    activeWatches.delete(dispose);
  };
  activeWatches.add(dispose);
  return { interrupted: interrupted.signal, urgent: urgent.signal, firstSignal: () => first, dispose };
}

/**
 * Makes the runner die of `signal` so a calling shell sees 128+n and stops its
 * script. Removes every listener for it (any listener would swallow the re-raise)
 * and re-raises; PID 1 of a container cannot die of its own signal, so an unref'd
 * fallback timer exits with 128+n. SIGQUIT is not re-raised: dying of it writes a core
 * file of the runner, which nobody asked for; the exit status is 131 all the same.
 */
export function dieOfSignal(signal: InterruptSignal): void {
  for (const dispose of [...activeWatches]) dispose();
  process.removeAllListeners(signal);
  const code = exitCodeFor("INTERRUPTED", signal);
  // If the event loop empties before the fallback fires, this is the exit status.
  process.exitCode = code;
  // eslint-disable-next-line no-restricted-properties -- the one sanctioned exit: no core file for a quit
  if (signal === "SIGQUIT") process.exit(code);
  // eslint-disable-next-line no-restricted-properties -- the one sanctioned exit: the re-raised signal was ignored (PID 1)
  setTimeout(() => process.exit(code), FALLBACK_EXIT_MS).unref();
  process.kill(process.pid, signal);
}
