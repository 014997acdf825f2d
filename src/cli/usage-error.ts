// A mistake in how ralph was called: shown as one line, exit code 2, nothing created.

/** Thrown by commands for bad flags, config or files; main prints its message and exits 2. */
export class UsageError extends Error {
  override readonly name = "UsageError";
}
