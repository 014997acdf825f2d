// Node's built-in modules loaded where first used, not where imported: a quick path that never needs one
// (`ralph status` with no live runner to ask about, the Stop hook with no loop) never pays for loading it.
// The CLI's CommonJS quick files get their own require() for createRequire's (scripts/bundle.mjs).
import { createRequire } from "node:module";

/** require() for Node's built-ins ("node:os"), as the caller's first use needs them. */
export const requireBuiltin = createRequire(import.meta.url);
