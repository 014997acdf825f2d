// V8's young generation kept at its first size (1 MB semi-spaces) instead of growing to 16 MB ones, which a
// run streaming its agent's output otherwise reaches (the measurements are in the README's Development section).
import { requireBuiltin } from "../util/require-builtin.js";

/**
 * Sets the flag, at run time so that it holds however ralph was started (its bin, `node dist/...`): V8
 * reads it each time it would grow the space, and growing by a factor of 1 keeps the size.
 */
export function keepYoungGenerationSmall(): void {
  (requireBuiltin("node:v8") as typeof import("node:v8")).setFlagsFromString("--semi-space-growth-factor=1");
}
