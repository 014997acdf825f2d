// Running as PID 1 of a container. Orphans reparent to PID 1, and Node cannot reap
// processes it did not spawn (it only waits for its own children's pids), so they
// would stay as zombies. PID 1 therefore starts a tiny Perl reaper that makes itself
// the child subreaper, runs ralph as its child, reaps every orphan that reparents to
// it, and exits with ralph's status. Node 20 cannot exec, so PID 1 stays a thin
// Node process that forwards signals to the reaper and exits with its status.
import { spawn, type ChildProcess } from "node:child_process";
import { signalExitStatus } from "../exit/exit-reasons.js";

/** The signals PID 1 passes on; any other signal is ignored by PID 1 anyway. */
const FORWARDED: NodeJS.Signals[] = ["SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT"];

/** prctl's system call number per Node architecture (Perl's syscall() needs it). */
export const PRCTL_SYSCALL: Record<string, number> = {
  x64: 157,
  arm64: 167,
  riscv64: 167,
  loong64: 167,
  ia32: 172,
  arm: 172,
  s390x: 172,
  ppc64: 171,
  ppc: 171,
};

// argv: PRCTL_NR PROGRAM ARGS... prctl(PR_SET_CHILD_SUBREAPER = 36, 1) makes orphans
// of ralph's agent trees reparent to the reaper. Signals arriving before the fork are kept and
// passed on after it (the child resets them on exec). waitpid(-1) reaps ralph and
// every adopted orphan; the reaper leaves as soon as ralph is gone (PID 1 exiting
// then ends whatever is left in the container).
const REAPER = `
use strict; use POSIX ();
$0 = "ralph-reaper";
my $prctl = shift @ARGV;
syscall($prctl, 36, 1, 0, 0, 0) if $prctl > 0;
my ($child, @pending) = (0);
for my $name (qw(INT TERM HUP QUIT)) {
  $SIG{$name} = sub { if ($child > 0) { kill $name, $child } else { push @pending, $name } };
}
$child = fork();
if (!defined $child) { print STDERR "ralph: reaper: fork failed: $!\\n"; exit 1 }
if ($child == 0) { exec { $ARGV[0] } @ARGV; print STDERR "ralph: reaper: cannot run $ARGV[0]: $!\\n"; POSIX::_exit(127) }
kill $_, $child for @pending;
my $status;
for (;;) {
  my $pid = waitpid(-1, 0);
  if ($pid == $child) { $status = $?; last }
  if ($pid == -1 && !$!{EINTR}) { last }
}
exit 1 unless defined $status;
exit(($status & 127) ? 128 + ($status & 127) : ($status >> 8));
`;

/** How running under the reaper went. */
export type ReaperResult = { kind: "exited"; exitCode: number } | { kind: "unavailable"; message: string };

export { isContainerInit } from "./container-init.js";

/**
 * Runs `command` (program and arguments) under the reaper, forwarding SIGINT,
 * SIGTERM, SIGHUP and SIGQUIT to it, and resolves with the exit code to leave with: the
 * command's, or 128+n when it died of signal n. "unavailable" when perl cannot be
 * started; the caller then runs without a reaper.
 */
export async function runUnderReaper(command: string[], perl = "perl"): Promise<ReaperResult> {
  let child: ChildProcess | null = null;
  const pending: NodeJS.Signals[] = [];
  const forward = (signal: NodeJS.Signals): void => {
    if (child === null) pending.push(signal);
    else child.kill(signal);
  };
  // Listening first: PID 1 ignores a signal it has no handler for, so none may arrive unhandled.
  for (const signal of FORWARDED) process.on(signal, forward);
  const stopForwarding = (): void => {
    for (const signal of FORWARDED) process.removeListener(signal, forward);
  };
  const nr = PRCTL_SYSCALL[process.arch];
  if (nr === undefined) {
    stopForwarding();
    return { kind: "unavailable", message: `no prctl system call number known for ${process.arch}` };
  }
  let started: ChildProcess;
  try {
    started = spawn(perl, ["-e", REAPER, String(nr), ...command], { stdio: "inherit" });
  } catch (error) {
    stopForwarding();
    return { kind: "unavailable", message: `cannot start ${perl}: ${(error as Error).message}` };
  }
  const exited = new Promise<number>((resolve) => {
    started.once("exit", (code, signal) => resolve(code ?? (signal ? signalExitStatus(signal) : 128)));
  });
  const failure = await new Promise<Error | null>((resolve) => {
    started.once("spawn", () => resolve(null));
    started.once("error", (error) => resolve(error));
  });
  if (failure !== null) {
    stopForwarding();
    const missing = (failure as NodeJS.ErrnoException).code === "ENOENT";
    return { kind: "unavailable", message: missing ? `${perl} not found` : `cannot start ${perl}: ${failure.message}` };
  }
  started.on("error", () => undefined);
  child = started;
  for (const signal of pending.splice(0)) started.kill(signal);
  const exitCode = await exited;
  stopForwarding();
  return { kind: "exited", exitCode };
}
