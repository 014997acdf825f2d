// SIGUSR1 makes Node open its inspector on 127.0.0.1:9229 for the rest of the process: anyone on the
// machine who can send the signal (or call process._debugProcess) then gets a debugger into the runner
// and, through it, into the agent's environment and keys. A listener replaces that default.

/** Makes SIGUSR1 do nothing in this process. Call it first thing, before any other module loads. */
export function ignoreDebugSignal(): void {
  process.on("SIGUSR1", () => undefined);
}
