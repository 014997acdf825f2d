// The two small Perl programs around bubblewrap. Outside: bubblewrap is started with the polite signals
// ignored, so ending the agent tree (SIGINT, then SIGTERM to every member) reaches the agent itself
// instead of killing bubblewrap, whose --die-with-parent would SIGKILL the agent before it saves its state.
// Inside: the agent gets the default signals back, and, with a network allowlist, a forwarder listens on
// the sandbox's own loopback and carries each connection to ralph's proxy through a bound unix socket.

/** What the sandbox shows, said when the agent's program cannot be started inside it. */
const SEEN =
  " (inside the sandbox: the work directory, ralph's files and the paths in the agent's command line; /tmp, /var/tmp and /run are private and empty; give another path with sandbox.write_allow, or run with --no-sandbox)";

/** The port the forwarder listens on inside the sandbox (its network namespace is its own). */
export const PROXY_PORT = 3128;

// argv: PROGRAM ARGS... (bubblewrap's command line)
const OUTSIDE = `$SIG{$_} = "IGNORE" for qw(INT TERM HUP QUIT);
exec { $ARGV[0] } @ARGV;
print STDERR "ralph sandbox: cannot run $ARGV[0]: $!\\n";
exit 127;`;

// argv: PROGRAM ARGS... (no network: nothing to forward)
const INSIDE_PLAIN = `$SIG{$_} = "DEFAULT" for qw(INT TERM HUP QUIT);
exec { $ARGV[0] } @ARGV;
print STDERR "ralph sandbox: cannot run $ARGV[0]: $!${SEEN}\\n";
exit 127;`;

// argv: PORT SOCKET PROGRAM ARGS... The listener is bound before the agent starts, so its first connection
// finds it. The launcher leaves with the agent's status; bubblewrap's init then ends, and the kernel ends
// everything else in the sandbox's PID namespace. No modules are loaded (Socket.pm alone costs ~25 ms per
// iteration here): the socket numbers are Linux's (AF_UNIX 1, AF_INET 2, SOCK_STREAM 1, SOL_SOCKET 1,
// SO_REUSEADDR 2, WNOHANG 1), the same on x86 and ARM.
const INSIDE_FORWARD = `my ($port, $path) = splice(@ARGV, 0, 2);
my @signals = qw(INT TERM HUP QUIT);
sub run_agent { $SIG{$_} = "DEFAULT" for @signals; exec { $ARGV[0] } @ARGV; print STDERR "ralph sandbox: cannot run $ARGV[0]: $!${SEEN}\\n"; exit 127 }
socket(my $listener, 2, 1, 0) or die "ralph sandbox: socket: $!\\n";
setsockopt($listener, 1, 2, pack("l", 1));
bind($listener, pack("S n C4 x8", 2, $port, 127, 0, 0, 1)) or die "ralph sandbox: bind 127.0.0.1:$port: $!\\n";
listen($listener, 128) or die "ralph sandbox: listen: $!\\n";
pipe(my $wake_r, my $wake_w) or die "ralph sandbox: pipe: $!\\n";
my $agent = fork();
die "ralph sandbox: fork: $!\\n" unless defined $agent;
if ($agent == 0) { close $listener; close $wake_r; close $wake_w; run_agent() }
open(STDIN, "<", "/dev/null");
$SIG{CHLD} = sub { syswrite($wake_w, "x") };
sub carry {
  my ($client) = @_;
  open(STDOUT, ">", "/dev/null"); open(STDERR, ">", "/dev/null");
  socket(my $up, 1, 1, 0) or exit 1;
  connect($up, pack("S a108", 1, $path)) or exit 1;
  my %peer = (fileno($client) => [$client, $up], fileno($up) => [$up, $client]);
  my $open = 2;
  while ($open > 0) {
    my $rin = "";
    vec($rin, $_, 1) = 1 for keys %peer;
    my $n = select(my $rout = $rin, undef, undef, undef);
    next if $n < 0;
    for my $fd (keys %peer) {
      next unless vec($rout, $fd, 1);
      my ($from, $to) = @{$peer{$fd}};
      my $got = sysread($from, my $buffer, 65536);
      if (!$got) { shutdown($to, 1); delete $peer{$fd}; $open--; next }
      my $off = 0;
      while ($off < $got) { my $w = syswrite($to, $buffer, $got - $off, $off); exit 0 unless defined $w; $off += $w }
    }
  }
  exit 0;
}
for (;;) {
  while ((my $pid = waitpid(-1, 1)) > 0) {
    next unless $pid == $agent;
    exit(($? & 127) ? 128 + ($? & 127) : ($? >> 8));
  }
  my $rin = "";
  vec($rin, fileno($listener), 1) = 1;
  vec($rin, fileno($wake_r), 1) = 1;
  my $n = select(my $rout = $rin, undef, undef, undef);
  next if $n <= 0;
  if (vec($rout, fileno($wake_r), 1)) { sysread($wake_r, my $drop, 64) }
  next unless vec($rout, fileno($listener), 1);
  accept(my $client, $listener) or next;
  my $child = fork();
  if (defined $child && $child == 0) { close $listener; carry($client) }
  close $client;
}`;

/** The argv that starts `bwrap OPTIONS -- inside-launcher ... ARGV` with the outer launcher's signal shield. */
export function sandboxedArgv(
  perl: string,
  bwrap: string,
  options: string[],
  proxySocket: string | null,
  argv: string[],
): string[] {
  const inside =
    proxySocket === null ? [perl, "-e", INSIDE_PLAIN] : [perl, "-e", INSIDE_FORWARD, String(PROXY_PORT), proxySocket];
  return [perl, "-e", OUTSIDE, bwrap, ...options, "--", ...inside, ...argv];
}
