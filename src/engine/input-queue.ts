// The engine's inputs, in arrival order, for a driver that handles one at a time.
import type { Input } from "./phase.js";

/** A queue the driver awaits; a failure of an effect in flight is thrown from `next`. */
export class InputQueue {
  private readonly queue: Input[] = [];
  private wake: (() => void) | null = null;
  private crash: { error: unknown } | null = null;

  /** Adds an input and wakes the waiting driver. */
  push(input: Input): void {
    this.queue.push(input);
    this.wake?.();
  }

  /** Makes the next `next` throw `error` (a bug in an effect, which ends the run FAILED). */
  fail(error: unknown): void {
    this.crash = { error };
    this.wake?.();
  }

  /** Whether an input is waiting to be handled. */
  get pending(): boolean {
    return this.queue.length > 0;
  }

  /** The oldest input, waiting for one when there is none. */
  async next(): Promise<Input> {
    for (;;) {
      if (this.crash) throw this.crash.error;
      const input = this.queue.shift();
      if (input) return input;
      await new Promise<void>((resolve) => (this.wake = resolve));
      this.wake = null;
    }
  }
}
