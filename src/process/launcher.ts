// The small Perl subreaper an agent starts under where no cgroup can hold its tree. It reports on
// file descriptor 3, which the agent never inherits (close-on-exec):
//   "exec ERRNO" / "subreaper MESSAGE"   the agent could not be started
//   "ok"                                 its child exec'd the agent
//   "exit code N" / "exit signal N"      its child (the agent) ended

/** The file descriptor the launchers report on. */
export const STATUS_FD = 3;

/**
 * The end of a subreaper (Perl, `$child` the agent, `$st` the status pipe): it reaps whatever it adopted,
 * reports the agent's end, and leaves with the agent's status through `exit` (its Perl function's name,
 * `exit` or `POSIX::_exit`) once it has no children left.
 */
export function reapAndLeave(exit: string): string {
  return `my $status = 0;
for (;;) {
  my $pid = waitpid(-1, 0);
  if ($pid == $child) {
    $status = $?;
    syswrite($st, ($status & 127) ? "exit signal " . ($status & 127) . "\\n" : "exit code " . ($status >> 8) . "\\n");
  } elsif ($pid == -1) {
    last unless $! + 0 == 4;  # EINTR
  }
}
${exit}(($status & 127) ? 128 + ($status & 127) : ($status >> 8));`;
}

// No modules are loaded (each costs milliseconds per iteration): fcntl(F_SETFD = 2, FD_CLOEXEC = 1)
// has the same numbers on every Linux architecture.
// argv: PRCTL_NR PROGRAM ARGS... Polite signals sent to the whole tree must not end the subreaper
// (its orphans would go to init), so it catches them; the child restores the defaults before exec.
// It leaves once it has no children left, with the agent's status.
const SUBREAPER = `
open(my $st, ">&=", 3) or exit 126;
fcntl($st, 2, 1);
my $nr = shift @ARGV;
if (syscall($nr, 36, 1, 0, 0, 0) == -1) { syswrite($st, "subreaper prctl failed: $!\\n"); exit 126 }
# Named through PR_SET_NAME: assigning $0 would overwrite the environment, and with it the run's marker.
my $name = "ralph-subreaper";
syscall($nr, 15, $name);
my @signals = qw(INT TERM HUP QUIT);
$SIG{$_} = sub {} for @signals;
pipe(my $r, my $w) or do { syswrite($st, "subreaper pipe: $!\\n"); exit 126 };
my $child = fork();
if (!defined $child) { syswrite($st, "subreaper fork: $!\\n"); exit 126 }
if ($child == 0) {
  close $r;
  $SIG{$_} = "DEFAULT" for @signals;
  exec { $ARGV[0] } @ARGV;
  syswrite($w, $! + 0);
  exit 127;
}
close $w;
# The runner may be gone (SIGKILL) when the agent ends: reporting to it must not kill the subreaper.
$SIG{PIPE} = "IGNORE";
my $err = "";
sysread($r, $err, 16);
close $r;
if ($err ne "") { waitpid($child, 0); syswrite($st, "exec $err\\n"); exit 127 }
syswrite($st, "ok\\n");
open(STDIN, "<", "/dev/null"); open(STDOUT, ">", "/dev/null"); open(STDERR, ">", "/dev/null");
${reapAndLeave("exit")}
`;

/** The argv that starts `argv` as the child of a subreaper. */
export function subreaperArgv(perl: string, prctlNr: number, argv: string[]): string[] {
  return [perl, "-e", SUBREAPER, String(prctlNr), ...argv];
}

/** A parsed status line from a launcher. */
export type LauncherStatus =
  | { kind: "ok" }
  | { kind: "failed"; errno: number | null; message: string }
  | { kind: "exit"; code: number | null; signal: number | null };

/** Reads one status line. */
export function parseLauncherStatus(line: string): LauncherStatus {
  if (line === "ok") return { kind: "ok" };
  const exit = /^exit (code|signal) (\d+)$/.exec(line);
  if (exit)
    return exit[1] === "code"
      ? { kind: "exit", code: Number(exit[2]), signal: null }
      : { kind: "exit", code: null, signal: Number(exit[2]) };
  const exec = /^exec (\d+)$/.exec(line);
  if (exec) return { kind: "failed", errno: Number(exec[1]), message: line };
  return { kind: "failed", errno: null, message: line };
}

/** What a launcher reported: how the start went, and (subreaper) when the agent ended. */
export interface LauncherReports {
  /** The first report: ok, failed, or null when the pipe closed without one. */
  started: Promise<LauncherStatus | null>;
  /** The agent's end as the subreaper saw it; never resolves otherwise. */
  agentExit: Promise<{ code: number | null; signal: number | null }>;
}

/** Reads the status lines a launcher writes on its status pipe. */
export function readLauncherReports(pipe: NodeJS.ReadableStream): LauncherReports {
  let onStart: (status: LauncherStatus | null) => void = () => undefined;
  let onExit: (exit: { code: number | null; signal: number | null }) => void = () => undefined;
  const started = new Promise<LauncherStatus | null>((resolve) => (onStart = resolve));
  const agentExit = new Promise<{ code: number | null; signal: number | null }>((resolve) => (onExit = resolve));
  let buffer = "";
  pipe.on("data", (chunk: Buffer) => {
    buffer += chunk.toString("utf8");
    let newline: number;
    while ((newline = buffer.indexOf("\n")) >= 0) {
      const status = parseLauncherStatus(buffer.slice(0, newline));
      buffer = buffer.slice(newline + 1);
      if (status.kind === "exit") onExit(status);
      else onStart(status);
    }
  });
  pipe.on("error", () => onStart(null));
  pipe.on("close", () => onStart(null));
  pipe.on("end", () => onStart(null));
  return { started, agentExit };
}
