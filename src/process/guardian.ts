// A watchdog process per run: if the runner dies without saying goodbye (even by
// SIGKILL), it ends every process carrying the run's marker.
import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { TreeMarker } from "./inventory.js";
import { findOnPath } from "./supervision.js";

/** The handle on a started guardian. */
export interface Guardian {
  /** The guardian's pid (undefined when it could not be started). */
  pid: number | undefined;
  /** The runner is ending normally: the guardian exits quietly without touching anything. */
  dispose(): void;
  /** Should the runner die, `progressFile`'s run (not ended by then) gets the INTERRUPTED completion marker. */
  markOnDeath(progressFile: string): void;
  /** That run has ended (or is no longer this runner's): forget it. */
  unmark(progressFile: string): void;
}

/** The message that tells the guardian the runner is ending normally. */
export const DISPOSE_MESSAGE = "dispose\n";

/** How the waiter hands the runs to mark on to the Node guardian it becomes: their progress files, one a line. */
export const MARK_ENV = "RALPH_GUARDIAN_MARK";

/** The progress files still to mark after the pipe's `lines` (`mark PATH`, `unmark PATH`), in order. */
export function runsToMark(lines: string[]): string[] {
  const runs = new Set<string>();
  for (const line of lines) {
    if (line.startsWith("mark ")) runs.add(line.slice(5));
    else if (line.startsWith("unmark ")) runs.delete(line.slice(7));
  }
  return [...runs];
}

const mainPath = fileURLToPath(new URL("./guardian-main.js", import.meta.url));

/**
 * While the runner lives, the guardian only waits on its pipe: a few lines of Perl (about 5 MB, where an
 * idle Node is 40 MB) wait for it. When the pipe closes without the dispose message, the waiter becomes
 * the Node guardian in place (exec: same pid, same session, the pipe already at its end), which then ends
 * the tree as it always did. SIGUSR1 is ignored as Node's guardian ignores it (and stays so across exec).
 */
const WAITER = `$SIG{USR1} = "IGNORE"; my ($rest, $buf, $done, %runs) = ("", "", 0);
while (sysread(STDIN, $buf, 4096)) {
  $rest .= $buf;
  while ($rest =~ s/^([^\\n]*)\\n//) { my $line = $1; if ($line eq "${DISPOSE_MESSAGE.trim()}") { $done = 1 } elsif ($line =~ /^mark (.+)$/) { $runs{$1} = 1 } elsif ($line =~ /^unmark (.+)$/) { delete $runs{$1} } }
  $rest = substr($rest, -65536);
}
exit 0 if $done; $ENV{${MARK_ENV}} = join("\\n", keys %runs); exec { $ARGV[0] } @ARGV; exit 1;`;

/**
 * Starts the guardian: a detached process (its own session, so a group kill of the
 * runner spares it) holding a pipe from the runner. When the pipe closes without
 * the dispose message, the runner is gone and the guardian ends the marked tree, and the
 * runner's cgroup (`cgroupDirs`: its v2 directory, then v1 companions) when there is one.
 * It never keeps the runner's event loop alive. Best effort: a failed start is silent.
 */
export function startGuardian(marker: TreeMarker, graceMs: number, cgroupDirs: string[] = []): Guardian {
  // The guardian must not carry the marker itself, or ending the tree would end it.
  const env = { ...process.env };
  delete env[marker.key];
  const guardian = [process.execPath, mainPath, marker.key, marker.value, String(graceMs), ...cgroupDirs];
  const perl = findOnPath("perl", env.PATH ?? "");
  const [program, ...args] = perl === null ? guardian : [perl, "-e", WAITER, ...guardian];
  let child: ChildProcess;
  try {
    child = spawn(program as string, args, {
      cwd: "/",
      env,
      stdio: ["pipe", "ignore", "ignore"],
      detached: true,
    });
  } catch {
    return { pid: undefined, dispose: () => undefined, markOnDeath: () => undefined, unmark: () => undefined };
  }
  child.on("error", () => undefined);
  child.stdin?.on("error", () => undefined);
  child.unref();
  // An idle pipe does not hold the event loop, but make sure it never does.
  (child.stdin as unknown as { unref?: () => void } | null)?.unref?.();
  let disposed = false;
  // A path with a newline cannot be said in a line (ralph's run directories never have one).
  const say = (line: string) => {
    if (!disposed && !line.slice(0, -1).includes("\n")) child.stdin?.write(line);
  };
  return {
    pid: child.pid,
    dispose() {
      if (disposed) return;
      disposed = true;
      child.stdin?.end(DISPOSE_MESSAGE);
    },
    markOnDeath: (progressFile) => say(`mark ${progressFile}\n`),
    unmark: (progressFile) => say(`unmark ${progressFile}\n`),
  };
}
