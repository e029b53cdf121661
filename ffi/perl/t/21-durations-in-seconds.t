# A bare number for any duration option of the constructor is seconds, Perl's convention
# (Cache::Memcached::Fast's connect_timeout and io_timeout, Python's): before, the core's
# own duration options (operation_timeout, retry_timeout, pool_timeout, ...) read a bare
# number as milliseconds, so { io_timeout => 10, operation_timeout => 2 } meant 10 s and
# 2 ms. Strings with a unit ('250ms') stay as the core reads them. Checked without waiting:
# a dead server's retry_in_ms (server_states) is the retry_timeout given.
use strict;
use warnings;
use Test::More;
use IO::Socket::INET;
use Mcpool;

sub closed_port {
    my $s = IO::Socket::INET->new(Listen => 1, LocalAddr => '127.0.0.1', LocalPort => 0) or die $!;
    my $port = $s->sockport;
    close $s;
    return "127.0.0.1:$port";
}

my $down = closed_port();

# The wait before a dead server is retried, in ms, for a retry_timeout given as $given.
sub retry_in_ms {
    my ($given) = @_;
    my $m = Mcpool->new({ servers => [$down], failure_limit => 1, retry_timeout => $given,
        retry_timeout_max => '3600s', connect_timeout => 1 });
    ok(!defined $m->get('k'), "retry_timeout $given: a get from a closed port fails");
    my ($st) = @{ $m->server_states };
    ok(!$st->{alive}, '... and marks it dead');
    return $st->{retry_in_ms};
}

my $ms = retry_in_ms(30);
ok($ms > 20_000 && $ms <= 30_000, "retry_timeout => 30 is 30 s (retry in $ms ms)");
$ms = retry_in_ms('30');
ok($ms > 20_000 && $ms <= 30_000, "retry_timeout => '30' too (retry in $ms ms)");
$ms = retry_in_ms(2.5);
ok($ms > 1_500 && $ms <= 2_500, "retry_timeout => 2.5 is 2.5 s (retry in $ms ms)");
$ms = retry_in_ms('30000ms');
ok($ms > 20_000 && $ms <= 30_000, "retry_timeout => '30000ms' as the core reads it (retry in $ms ms)");

# Which options are durations is the core's answer, in any spelling the core reads.
ok(Mcpool::_option_is_duration('operation_timeout'), 'operation_timeout is a duration');
ok(Mcpool::_option_is_duration('Retry-Timeout'), '... Retry-Timeout too');
ok(!Mcpool::_option_is_duration('failure_limit'), 'failure_limit is not');
ok(!Mcpool::_option_is_duration('no_such_option'), 'an unknown name is not');

# A bare number out of range croaks naming the option and the unit; 0 is the core's own 0.
ok(!eval { Mcpool->new({ servers => [$down], operation_timeout => -1 }); 1 }, 'a negative duration croaks');
like($@, qr/operation_timeout must be a number between 0 and 1000000000 seconds/, '... in seconds');
ok(eval { Mcpool->new({ servers => [$down], operation_timeout => 0 }); 1 }, 'operation_timeout 0 (none) is taken')
    or diag $@;
ok(!eval { Mcpool->new({ servers => [$down], pool_timeout => 0 }); 1 }, 'pool_timeout 0 is refused, as the core refuses it');

# A refused duration's message says no unit for a bare number, which Perl reads as seconds
# (tester finding retest27 5: it said "or a number of milliseconds").
ok(!eval { Mcpool->new({ servers => [$down], tcp_keepidle => '5min' }); 1 }, 'a duration without a known unit croaks');
like($@, qr/tcp_keepidle.*a duration with its unit/, '... saying what is accepted');
# (the core's message says both readings, seconds as a Perl number: tester finding optparity 4)
like($@, qr/a bare number is milliseconds as text, seconds as a Python or Perl number/,
    '... and that a bare number is seconds in Perl');
# tcp_keepidle is whole seconds in the kernel's range (retest27 4): 45 is 45 s, 0.5 refused
ok(eval { Mcpool->new({ servers => [$down], tcp_keepalive => 1, tcp_keepidle => 45 }); 1 }, 'tcp_keepidle 45 (seconds)')
    or diag $@;
ok(!eval { Mcpool->new({ servers => [$down], tcp_keepalive => 1, tcp_keepidle => 0.5 }); 1 }, 'tcp_keepidle 0.5 croaks');
like($@, qr/whole seconds from 1s to 32767s/, '... saying the range');

done_testing;
