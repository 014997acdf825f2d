// A `--parallel` child inside its parent's process: the signals its parent passes on, as the engine sees them.
import type { SignalSource } from "../engine/engine-io.js";
import type { InterruptSignal } from "../exit/exit-reasons.js";

/** A child's own SignalSource, and the one way to drive it. */
export interface ChildSignals {
  source: SignalSource;
  /** The parent passes `signal` on: the first interrupts the child, a further one makes it urgent. */
  pass(signal: NodeJS.Signals): void;
}

/** A SignalSource no process signal reaches: only the parent's `pass` (the parent decides the levels). */
export function childSignals(): ChildSignals {
  const interrupted = new AbortController();
  const urgent = new AbortController();
  let first: InterruptSignal | null = null;
  return {
    source: { interrupted: interrupted.signal, urgent: urgent.signal, firstSignal: () => first },
    pass(signal) {
      const name = signal as InterruptSignal;
      if (first === null) {
        first = name;
        interrupted.abort(name);
        return;
      }
      urgent.abort(name);
    },
  };
}
