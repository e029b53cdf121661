# A Perl signal handler installed after the client's first call (a preforking parent that
# reaps its workers with $SIG{CHLD}): the process died of SIGSEGV when a signal came during a
# call, because the kernel gave it to the core's background thread, which has no
# interpreter, while the calling thread held it back (tester finding fork 2). The core's
# threads take no signal now.
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use McpoolTest;
use Mcpool;
use POSIX ':sys_wait_h';
use Time::HiRes qw(time usleep);

my $srv = start_memcached();
my $p   = unique('sig');
my $mc  = Mcpool->new({ servers => [$srv], min_idle => 1 });
ok $mc->set("${p}k", 'v'), 'stored before any handler';
is $mc->get("${p}k"), 'v', 'a first call starts the background thread';

my $reaped = 0;
local $SIG{CHLD} = sub { while ((my $pid = waitpid(-1, WNOHANG)) > 0) { $reaped++ } };
my $workers = 20;
for my $n (1 .. $workers) {
    my $pid = fork;
    die "fork: $!" unless defined $pid;
    if (!$pid) { usleep(10_000 + 3_000 * $n); POSIX::_exit(0) }
}
my ($ok, $bad) = (0, 0);
my $end = time + 30;
while (($reaped < $workers || $ok < 100) && time < $end) {
    ($mc->get("${p}k") // '') eq 'v' ? $ok++ : $bad++;
}
is $reaped, $workers, 'every worker reaped by the handler, the process alive';
is $bad, 0, "every get answered (ok $ok)";
done_testing;
