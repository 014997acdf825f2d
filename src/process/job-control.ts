// Ctrl-Z for the whole run. The agent runs in its own process group (so that a terminal's Ctrl-C reaches
// only the runner), which also means the terminal's SIGTSTP never reaches it: without this, Ctrl-Z
// stopped ralph while its agent went on working, unwatched. Here SIGTSTP stops the agent's tree, then
// the runner; SIGCONT (`fg`, `bg`, kill -CONT) continues the tree with the runner.
// The iteration's --timeout and --idle-timeout count wall-clock time, stopped time included: an
// iteration whose time ran out while stopped ends as soon as the run is continued.
import type { ProcessIdentity, TreeMarker } from "./inventory.js";
import { TreeScanner } from "./tree-scanner.js";

/** The SIGTSTP and SIGCONT listeners of one run; dispose() removes them. */
export interface JobControl {
  dispose(): void;
}

/** Handles SIGTSTP and SIGCONT for the tree that carries `marker`. */
export function watchJobControl(marker: TreeMarker): JobControl {
  let scanner: TreeScanner | null = null;
  let stopped: ProcessIdentity[] = [];
  const onStop = (): void => {
    scanner = new TreeScanner(null, marker, []);
    stopped = [...scanner.scan().values()];
    scanner.sendAll(stopped, "SIGSTOP");
    // SIGSTOP, not SIGTSTP: a stop signal is the default action we replaced, and SIGSTOP cannot be
    // caught or discarded (the kernel drops SIGTSTP for a process group without a shell to resume it).
    process.kill(process.pid, "SIGSTOP");
  };
  const onContinue = (): void => {
    if (!scanner) return;
    // Everything stopped, and anything of the tree found now (stopped by someone else), goes on.
    scanner.sendAll([...stopped, ...scanner.scan().values()], "SIGCONT");
    scanner = null;
    stopped = [];
  };
  process.on("SIGTSTP", onStop);
  process.on("SIGCONT", onContinue);
  return {
    dispose: () => {
      process.removeListener("SIGTSTP", onStop);
      process.removeListener("SIGCONT", onContinue);
    },
  };
}
