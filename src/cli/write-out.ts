// Writing a command's whole output to stdout with a plain write(2): building `process.stdout` loads and
// sets up Node's stream modules, a cost `ralph status` would pay at every call for one short write.
import { writeSync } from "node:fs";

/**
 * Writes `text` to file descriptor 1. A reader that closed the pipe ends the output quietly, as the full
 * CLI's stdout does; anything else (a non-blocking pipe that is full, a failing disk) leaves the rest to
 * `process.stdout`, which waits or reports as for every other command.
 */
export function writeOut(text: string): void {
  const bytes = Buffer.from(text, "utf8");
  let done = 0;
  try {
    while (done < bytes.length) done += writeSync(1, bytes, done);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EPIPE") return;
    process.stdout.write(bytes.subarray(done));
  }
}
