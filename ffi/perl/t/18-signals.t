# The timeout idiom of perlipc: a signal handler that dies, around a call to a server that does
# not answer. An "unsafe" handler (POSIX::sigaction's default, Sys::SigAction's timeout_call)
# runs inside the C signal handler: were its die to unwind through the core, the call's pooled
# connection would never go back, and after pool_size such interrupts every call to that
# server would wait pool_timeout and fail, even once the server is back. Mcpool holds the
# Perl-handled signals during each call into the core and delivers them as it returns (POD
# "SIGNALS"): the handler dies there, the pool is whole, the server serves once it is back.
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use McpoolTest;
use Mcpool;
use IO::Socket::INET;
use POSIX qw(SIGALRM SIG_BLOCK SIG_UNBLOCK SIG_SETMASK);
use Time::HiRes qw(time ualarm);

my $IO = 0.7;        # io_timeout: the interrupted call returns then, and its handler dies
my $POOL = 2;        # pool_size: the interrupts are more than this
my $ROUNDS = $POOL + 2;

# A server that accepts (the kernel completes the handshake) and never answers, on a free port.
sub silent_server {
    my $ls = IO::Socket::INET->new(Listen => 64, LocalAddr => '127.0.0.1', LocalPort => 0,
        Proto => 'tcp', ReuseAddr => 1) or die "listen: $!";
    return $ls;
}

sub client_for {
    my $port = shift;
    return Mcpool->new({ servers => ["127.0.0.1:$port"], io_timeout => $IO,
        pool_size => $POOL, pool_timeout => '300ms' });
}

# Whether SIGALRM is in this thread's signal mask.
sub alrm_blocked {
    my $old = POSIX::SigSet->new;
    POSIX::sigprocmask(SIG_BLOCK, POSIX::SigSet->new, $old) or die "sigprocmask: $!";
    return $old->ismember(SIGALRM) ? 1 : 0;
}

# $install->() sets the dying ALRM handler and returns a code ref that takes it away. Runs
# $ROUNDS gets against a silent server, each interrupted by a 0.3 s ualarm whose handler dies;
# then a memcached takes the server's port and the same client must serve it.
sub idiom_ok {
    my ($name, $install) = @_;
    subtest $name => sub {
        my $ls = silent_server();
        my $port = $ls->sockport;
        my $m = client_for($port);
        for my $i (1 .. $ROUNDS) {
            my $t = time;
            my $undo;
            my $ok = eval {
                $undo = $install->();
                ualarm 300_000;
                $m->get("k$i");
                ualarm 0;
                1;
            };
            my $err = $@;
            ualarm 0;
            $undo->() if $undo;
            my $took = time - $t;
            ok(!$ok, "round $i: the handler's die ends the call");
            is($err, "timeout\n", "round $i: with the handler's message");
            cmp_ok($took, '<', $IO + 2, "round $i: bounded by io_timeout ($took s)");
            is(alrm_blocked(), 0, "round $i: SIGALRM is not left blocked");
        }
        close $ls;    # the server comes back: memcached on the same port
        my $srv = restart_memcached("127.0.0.1:$port");
        my $t = time;
        my $v;
        for my $try (1 .. 3) {    # the first call may meet a connection the silence broke
            $m->set('back', "v$try");
            $v = $m->get('back');
            last if defined $v && $v eq "v$try";
        }
        like($v // '', qr/^v\d$/, 'the server serves the same client once back')
            or diag('last_error: ' . ($m->last_error // ''));
        cmp_ok(time - $t, '<', 2, 'without waiting for a pooled connection');
        stop_memcached($srv);
    };
}

idiom_ok('POSIX::sigaction, unsafe (the default)', sub {
    my $old = POSIX::SigAction->new;
    POSIX::sigaction(SIGALRM, POSIX::SigAction->new(sub { die "timeout\n" }), $old)
        or die "sigaction: $!";
    return sub { POSIX::sigaction(SIGALRM, $old) };
});

# Sys::SigAction's timeout_call: a POSIX::SigAction with an empty mask, flags 0, safe off,
# installed for the call and the old action put back after.
idiom_ok('Sys::SigAction-style timeout_call', sub {
    my $old = POSIX::SigAction->new;
    my $act = POSIX::SigAction->new(sub { die "timeout\n" }, POSIX::SigSet->new, 0);
    $act->safe(0);
    POSIX::sigaction(SIGALRM, $act, $old) or die "sigaction: $!";
    return sub { POSIX::sigaction(SIGALRM, $old) };
});

idiom_ok('POSIX::sigaction, safe', sub {
    my $old = POSIX::SigAction->new;
    my $act = POSIX::SigAction->new(sub { die "timeout\n" });
    $act->safe(1);
    POSIX::sigaction(SIGALRM, $act, $old) or die "sigaction: $!";
    return sub { POSIX::sigaction(SIGALRM, $old) };
});

idiom_ok('%SIG handler (deferred signals)', sub {
    $SIG{ALRM} = sub { die "timeout\n" };
    return sub { $SIG{ALRM} = 'DEFAULT' };
});

subtest 'a signal the program blocked itself stays blocked' => sub {
    my $srv = start_memcached();
    my $m = Mcpool->new({ servers => [$srv], io_timeout => 2 });
    local $SIG{ALRM} = sub { die "timeout\n" };
    my $old = POSIX::SigSet->new;
    POSIX::sigprocmask(SIG_BLOCK, POSIX::SigSet->new(SIGALRM), $old) or die "sigprocmask: $!";
    ok($m->set('blocked', 1), 'a call with SIGALRM handled and blocked by the program');
    is(alrm_blocked(), 1, 'SIGALRM is still blocked after it');
    POSIX::sigprocmask(SIG_SETMASK, $old) or die "sigprocmask: $!";
    is(alrm_blocked(), 0, 'and unblocked when the program says so');
    ok($m->set('unblocked', 1), 'a call with SIGALRM handled');
    is(alrm_blocked(), 0, 'leaves it unblocked');
    stop_memcached($srv);
};

subtest 'a signal left to its default action is not held' => sub {
    # SIGTERM without a handler ends a process waiting on a silent server at once, not
    # after io_timeout
    my $ls = silent_server();
    my $port = $ls->sockport;
    my $pid = fork() // die "fork: $!";
    if (!$pid) {
        my $m = Mcpool->new({ servers => ["127.0.0.1:$port"], io_timeout => 5 });
        $SIG{ALRM} = sub { die "timeout\n" };    # a handled signal: the others still pass
        $m->get('k');
        POSIX::_exit(0);
    }
    select undef, undef, undef, 0.3;
    my $t = time;
    kill 'TERM', $pid;
    waitpid $pid, 0;
    is($? & 127, POSIX::SIGTERM(), 'the child ended by SIGTERM');
    cmp_ok(time - $t, '<', 2, 'during the call');
    close $ls;
};

done_testing;
