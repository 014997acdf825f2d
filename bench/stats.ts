// Summaries of repeated measurements: every figure is a median with its min and max.

/** The summary of one figure's samples. */
export interface Summary {
  median: number;
  min: number;
  max: number;
  n: number;
  samples: number[];
}

/** Median, min and max of `samples` (the median of an even count is the mean of the middle two). */
export function summarize(samples: number[]): Summary {
  if (samples.length === 0) throw new Error("no samples to summarize");
  const sorted = [...samples].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  const median =
    sorted.length % 2 === 1
      ? (sorted[middle] as number)
      : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
  return { median, min: sorted[0] as number, max: sorted[sorted.length - 1] as number, n: samples.length, samples };
}

/** Collects named samples across rounds, so approaches measured in the same round can be compared. */
export class Samples {
  private readonly values = new Map<string, number[]>();

  /** Adds one sample to figure `name`. */
  add(name: string, value: number): void {
    const list = this.values.get(name);
    if (list) list.push(value);
    else this.values.set(name, [value]);
  }

  /** The summary of figure `name`, or null when it has no samples. */
  get(name: string): Summary | null {
    const list = this.values.get(name);
    return list && list.length > 0 ? summarize(list) : null;
  }
}

/** Milliseconds since an arbitrary origin, with sub-millisecond resolution. */
export function nowMs(): number {
  return performance.now();
}

/** The wall clock in milliseconds with sub-millisecond resolution (comparable across processes). */
export function wallMs(): number {
  return performance.timeOrigin + performance.now();
}

/** Resolves after `ms`. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Formats a number of milliseconds or megabytes compactly. */
export function formatNumber(value: number): string {
  if (!Number.isFinite(value)) return String(value);
  const magnitude = Math.abs(value);
  if (magnitude >= 100) return value.toFixed(0);
  if (magnitude >= 10) return value.toFixed(1);
  return value.toFixed(2);
}

/**
 * Runs one measurement; when it throws, logs why and tries once more (a stray failure, e.g. a
 * rebuild of dist/ under a running CLI, must not throw away minutes of samples). A second failure throws.
 */
export async function retryOnce<T>(what: string, measure: () => Promise<T>, log: (line: string) => void): Promise<T> {
  try {
    return await measure();
  } catch (error) {
    log(`${what}: failed, measuring again: ${(error as Error).message}`);
    return measure();
  }
}
