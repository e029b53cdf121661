# A duration option given as a positive number of seconds is never 0 in the core: before
# (tester finding retest29 4) the seconds went to the core as whole microseconds, so one
# under 0.5 µs (4e-7) became '0us', which these options read as "none" or "the system's":
# operation_timeout => 4e-7 gave no deadline at all, tcp_keepidle => 4e-7 the system's
# 2 hours (while 1e-6 was refused), io_timeout => 4e-7 was refused as "0us", a value never
# given. Now the core gets the nanoseconds (its resolution; a positive number below one is
# 1 ns), and accepts or refuses them by its own rule. Negative, NaN and infinite numbers
# croak naming the option and the value.
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use McpoolTest;
use Mcpool;

my $srv = start_memcached();
my $k = unique('tiny-duration');
ok(Mcpool->new({ servers => [$srv] })->set($k, 'v'), 'a value stored');

# operation_timeout 4e-7 s (400 ns) is a deadline no round trip to memcached meets.
for my $v (4e-7, 1e-10) {
    my $m = Mcpool->new({ servers => [$srv], operation_timeout => $v });
    my @r = $m->get($k);
    is_deeply(\@r, [], "operation_timeout => $v: a get does not finish in time");
    like(Mcpool::last_error(), qr/operation timeout/, "... last_error says the operation timed out")
        or diag Mcpool::last_error();
}
{    # and 0 is still the core's 0, no deadline
    my $m = Mcpool->new({ servers => [$srv], operation_timeout => 0 });
    is($m->get($k), 'v', 'operation_timeout => 0: no deadline, the value read');
}

# tcp_keepidle is whole seconds from 1: 400 ns is refused as 1 µs is, never the system's.
for my $v (4e-7, 1e-6, 1e-12) {
    ok(!eval { Mcpool->new({ servers => [$srv], tcp_keepalive => 1, tcp_keepidle => $v }); 1 },
        "tcp_keepidle => $v croaks");
    like($@, qr/tcp_keepidle .*whole seconds from 1s to 32767s/, '... with the core\'s reason');
}

# io_timeout (Cache::Memcached::Fast's, seconds): 4e-7 is 400 ns, which the core takes (it
# was refused as "0us"); 0 is still Cache::Memcached::Fast's no limit.
for my $v (4e-7, 0) {
    my $m = eval { Mcpool->new({ servers => [$srv], io_timeout => $v }) };
    ok($m, "io_timeout => $v is taken") or diag $@;
}

# Negative, NaN and infinite numbers croak, naming the option and the value.
for my $opt (qw(operation_timeout tcp_keepidle io_timeout connect_timeout retry_timeout)) {
    for my $v (-1, -4e-7, 9**9**9, -9**9**9, -sin(9**9**9)) {
        ok(!eval { Mcpool->new({ servers => [$srv], tcp_keepalive => 1, $opt => $v }); 1 }, "$opt => $v croaks");
        like($@, qr/^Mcpool->new: \Q$opt\E must be a number between 0 and 1000000000 seconds \(got '\Q$v\E'\)/,
            '... naming the option and the value');
    }
}

stop_memcached($srv);
done_testing;
