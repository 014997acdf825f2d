// The sha256 of a file's bytes, read through the bounded regular-file reader: never through a link, never
// blocking on a FIFO swapped in, never more than the reader's bound. What ralph pins and records is hashed here.
import { requireBuiltin } from "../util/require-builtin.js";
import { readRegular } from "./regular-file.js";

/** sha256 (hex) of the regular file `file`'s bytes, or null when it is not one or cannot be read. */
export function fileDigest(file: string): string | null {
  try {
    // node:crypto loaded at the first digest, not by every file that imports this one (the Stop hook).
    return (requireBuiltin("node:crypto") as typeof import("node:crypto"))
      .createHash("sha256")
      .update(readRegular(file))
      .digest("hex");
  } catch {
    return null;
  }
}
