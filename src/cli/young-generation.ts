// V8's young generation kept at its first size (1 MB semi-spaces) instead of growing to 16 MB ones, which a
// run streaming its agent's output otherwise reaches (the measurements are in docs/internals/development.md);
// and let grow again by a command that reads every run once and ends (`ralph list`, `ralph status`).
import { requireBuiltin } from "../util/require-builtin.js";

/** Set on the process once the flag is set: each bundle (main.cjs, full.cjs, quick-status.cjs) has its own copy of this module. */
const KEPT_SMALL = Symbol.for("ralph.young-generation-kept-small");

/**
 * Sets the flag, at run time so that it holds however ralph was started (its bin, `node dist/...`): V8
 * reads it each time it would grow the space, and growing by a factor of 1 keeps the size.
 */
export function keepYoungGenerationSmall(): void {
  (requireBuiltin("node:v8") as typeof import("node:v8")).setFlagsFromString("--semi-space-growth-factor=1");
  (globalThis as Record<symbol, unknown>)[KEPT_SMALL] = true;
}

/**
 * V8's own growth (a factor of 2), for a command that holds what it reads until it prints it and then ends:
 * with 1 MB semi-spaces, listing 10,000 runs kept everything it had read alive through 120 collections,
 * each copying it again. Set once the full CLI is loaded (its code cache is taken only under the flags it
 * was made with). Nothing to do where it was never kept small (the quick `status` path), which then loads
 * no `node:v8` (and with it Node's streams).
 */
export function letYoungGenerationGrow(): void {
  if ((globalThis as Record<symbol, unknown>)[KEPT_SMALL] !== true) return;
  (requireBuiltin("node:v8") as typeof import("node:v8")).setFlagsFromString("--semi-space-growth-factor=2");
}
