// Imported second by the full CLI (main.ts), before the command tree loads: V8's young generation stays at
// its first size (1 MB semi-spaces) instead of growing to 16 MB ones, which a run streaming its agent's
// output otherwise reaches (the measurements are in the README's Development section).
import { setFlagsFromString } from "node:v8";

// Set at run time, so that it holds however ralph was started (its bin, `node dist/...`): V8 reads this
// flag each time it would grow the space, and growing by a factor of 1 keeps the size.
setFlagsFromString("--semi-space-growth-factor=1");
