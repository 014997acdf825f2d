// Imported first by every Node entry point: closes the SIGUSR1 inspector door before anything else runs
// (ES modules are evaluated in import order).
import { ignoreDebugSignal } from "../process/debug-signal.js";

ignoreDebugSignal();
