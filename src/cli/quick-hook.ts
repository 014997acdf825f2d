// `ralph hook handle` as the built CLI's quick path runs it: bundled into one file of its own
// (scripts/bundle.mjs); deciding a stop with a loop active loads the loop's modules from their own entry.
export { hookHandleCommand as quickHook } from "./commands/hook-handle.js";
