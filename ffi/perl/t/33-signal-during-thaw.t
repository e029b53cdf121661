# A signal that comes while a call waits for its server is held and delivered as the call
# returns (POD "SIGNALS"): its handler's die must come out of the method, also when the reply
# is a Storable value. Perl's safe signals run a handler at the next Perl op, and the first op
# after the core's return used to be inside the guarded thaw: the die was caught there as a
# thaw failure, the method returned undef and warned that a good value "does not thaw"
# (tester finding perlweb 1). The held signals are now dispatched before anything else runs.
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use McpoolTest;
use Mcpool;
use IO::Socket::INET;
use Storable ();
use Time::HiRes qw(time);
use POSIX ();

my $image = Storable::nfreeze({ user => 42 });

# A server that answers each get 1.5 s late with a Storable value (flags 1), in a child.
my $ls = IO::Socket::INET->new(Listen => 8, LocalAddr => '127.0.0.1', LocalPort => 0,
    Proto => 'tcp', ReuseAddr => 1) or die "listen: $!";
my $port = $ls->sockport;
my $pid = fork // die "fork: $!";
if ($pid == 0) {
    for my $conn_no (1 .. 8) {
        my $c = $ls->accept or last;
        while (defined(my $line = <$c>)) {
            last unless $line =~ /^get (\S+)/;
            my $key = $1;
            select(undef, undef, undef, 1.5);    # the slow server this test is about
            print {$c} "VALUE $key 1 " . length($image) . "\r\n$image\r\nEND\r\n";
        }
        close $c;
    }
    POSIX::_exit(0);
}
close $ls;

my $m = Mcpool->new({ servers => ["127.0.0.1:$port"], io_timeout => 5 });
for my $call (qw(get get_multi)) {
    my @warnings;
    local $SIG{__WARN__} = sub { push @warnings, @_ };
    local $SIG{ALRM} = sub { die "timeout\n" };
    my $t = time;
    my $got = eval {
        alarm 1;
        my $v = $call eq 'get' ? $m->get('slowref') : $m->get_multi('slowref');
        alarm 0;
        $v;
    };
    my $err = $@;
    alarm 0;
    is($err, "timeout\n", "$call: the alarm handler's die comes out of the call");
    ok(!defined $got, "$call: nothing returned");
    is_deeply(\@warnings, [], "$call: no warning that the value does not thaw");
    cmp_ok(time - $t, '<', 4.5, "$call: within the server's delay and io_timeout");
}
# the value itself thaws, without an alarm
is_deeply($m->get('slowref'), { user => 42 }, 'the same reply, uninterrupted, thaws');

kill 'TERM', $pid;
waitpid $pid, 0;
done_testing;
