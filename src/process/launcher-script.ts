// The Perl launcher a run under a subreaper keeps for all its agents: started once, it forks each agent's
// subreaper (no new Perl per iteration). Requests come on its stdin as frames (a type byte, a 10-digit length,
// the payload); it answers on stdout one line at a time:
//   "fds ID PID IN OUT ERR STATUS"  the subreaper PID is forked; the runner opens those descriptors of the
//                                   launcher through /proc, then sends a "g" frame and the launcher closes them
//   "failed ID ERRNO"               it could not fork
//   "left ID WAITSTATUS"            the subreaper has left
// A subreaper reports on its STATUS pipe exactly as the subreaper script in launcher.ts does. The launcher is
// in the runner's process group (so the runner's own tree endings never signal it), ignores the terminal's
// signals, and carries the run's marker: should the runner die, the guardian finds it, and through it every
// subreaper and what they adopted. Once its stdin closes it leaves as soon as its subreapers have.
import { reapAndLeave } from "./launcher.js";

/** The launcher's source; argv: PRCTL_NR. */
export const LAUNCHER_SCRIPT = `
use strict; use POSIX ();
my $nr = shift @ARGV;
my @terminal = qw(INT TERM HUP QUIT TSTP TTIN TTOU);
$SIG{$_} = "IGNORE" for "PIPE", @terminal;
my (%subreapers, %held);
my @signals = qw(INT TERM HUP QUIT);
my $chld = POSIX::SigSet->new(POSIX::SIGCHLD());
$SIG{CHLD} = sub {
  while ((my $pid = waitpid(-1, POSIX::WNOHANG())) > 0) {
    my $id = delete $subreapers{$pid};
    syswrite(STDOUT, "left $id $?\\n") if defined $id;
  }
};
sub readn {
  my ($n) = @_; my $buf = "";
  while (length($buf) < $n) {
    my $r = sysread(STDIN, $buf, $n - length($buf), length($buf));
    next if !defined($r) && $! + 0 == 4;
    if (!$r) { for (;;) { last if waitpid(-1, 0) == -1 && $! + 0 != 4 } POSIX::_exit(0) }
  }
  return $buf;
}
sub subreaper {
  my ($st, $ir, $ow, $ew, $cwd, $with_stdin, $argv, $env) = @_;
  $SIG{$_} = "DEFAULT" for "CHLD", "PIPE", @terminal;
  POSIX::sigprocmask(POSIX::SIG_UNBLOCK(), $chld);
  close($_) for map { @$_ } values %held;
  open(STDIN, "<", "/dev/null"); open(STDOUT, ">", "/dev/null"); open(STDERR, ">", "/dev/null");
  POSIX::setsid();
  if (syscall($nr, 36, 1, 0, 0, 0) == -1) { syswrite($st, "subreaper prctl failed: $!\\n"); POSIX::_exit(126) }
  my $name = "ralph-subreaper";
  syscall($nr, 15, $name);
  if (!chdir($cwd)) { syswrite($st, "exec " . ($! + 0) . "\\n"); POSIX::_exit(127) }
  $SIG{$_} = sub {} for @signals;
  pipe(my $r, my $w) or do { syswrite($st, "subreaper pipe: $!\\n"); POSIX::_exit(126) };
  my $child = fork();
  if (!defined $child) { syswrite($st, "subreaper fork: $!\\n"); POSIX::_exit(126) }
  if ($child == 0) {
    close $r;
    $SIG{$_} = "DEFAULT" for @signals;
    if ($with_stdin) { open(STDIN, "<&", $ir) } else { open(STDIN, "<", "/dev/null") }
    open(STDOUT, ">&", $ow); open(STDERR, ">&", $ew);
    %ENV = map { split(/=/, $_, 2) } @$env;
    exec { $argv->[0] } @$argv;
    syswrite($w, $! + 0);
    POSIX::_exit(127);
  }
  close $w; close $ir; close $ow; close $ew;
  $SIG{PIPE} = "IGNORE";
  my $err = "";
  sysread($r, $err, 16);
  close $r;
  if ($err ne "") { waitpid($child, 0); syswrite($st, "exec $err\\n"); POSIX::_exit(127) }
  syswrite($st, "ok\\n");
  ${reapAndLeave("POSIX::_exit")}
}
for (;;) {
  my $type = readn(1);
  my $payload = readn(readn(10) + 0);
  if ($type eq "g") { close($_) for @{delete($held{$payload}) || []}; next }
  my ($id, $cwd, $with_stdin, $argc, @rest) = split(/\\0/, $payload, -1);
  my @argv = splice(@rest, 0, $argc);
  pipe(my $ir, my $iw) and pipe(my $or, my $ow) and pipe(my $er, my $ew) and pipe(my $sr, my $sw)
    or do { syswrite(STDOUT, "failed $id " . ($! + 0) . "\\n"); next };
  POSIX::sigprocmask(POSIX::SIG_BLOCK(), $chld);
  my $pid = fork();
  if (!defined $pid) {
    POSIX::sigprocmask(POSIX::SIG_UNBLOCK(), $chld);
    syswrite(STDOUT, "failed $id " . ($! + 0) . "\\n");
    next;
  }
  if ($pid == 0) { close $iw; close $or; close $er; close $sr; subreaper($sw, $ir, $ow, $ew, $cwd, $with_stdin, \\@argv, \\@rest) }
  close $ir; close $ow; close $ew; close $sw;
  $subreapers{$pid} = $id;
  $held{$id} = [$iw, $or, $er, $sr];
  syswrite(STDOUT, "fds $id $pid " . join(" ", map { fileno($_) } $iw, $or, $er, $sr) . "\\n");
  POSIX::sigprocmask(POSIX::SIG_UNBLOCK(), $chld);
}
`;
