# on_operation's ended_ago is measured when the sub is called with the record (tester finding
# observability 1): the records are queued during the call and handed to the sub after the
# method returns, one after the other; ended_ago was measured once, when the method returned,
# so with a slow sub record i's exchange was shifted by the run time of the subs before it (a
# 3-server get_multi with a 100 ms sub put the exchanges at 0-0.45 ms, 100-100.6 ms and
# 200-200.7 ms, though all had ended by 0.45 ms). The promise (POD, docs/tracing.md): the
# exchange ran from now - ended_ago - duration to now - ended_ago, now being when the sub is
# called. Checked against the monotonic clock (the core's), with bounds that hold however slow
# the machine is: every exchange ended before the first sub was called (the subs run after
# the method's exchanges), whereas the shift the fix removes is 50 ms per earlier sub.
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use McpoolTest;
use Mcpool;
use Time::HiRes qw(clock_gettime CLOCK_MONOTONIC sleep);

my @srv = map { start_memcached() } 1 .. 3;
my $p = unique('ea');
my $nap = 0.05;    # each sub call: 50 ms
# The clocks agree (both CLOCK_MONOTONIC); the sub reads it a moment after ended_ago was
# measured for it, a moment that a busy machine may stretch: 20 ms allowed, well below the
# 50 ms per earlier sub that the fix removes.
my $slack = 0.02;

my @seen;    # [ the sub's now, the record ] per call
my $memd = Mcpool->new({ servers => \@srv, on_operation => sub {
    my ($rec) = @_;
    push @seen, [ clock_gettime(CLOCK_MONOTONIC), { %$rec } ];
    sleep $nap;
} });

# two keys on every server
my (%on, @keys);
for my $i (0 .. 999) {
    my $k = "$p$i";
    next if $on{ $memd->server_for($k) }++ >= 2;
    push @keys, $k;
    last if @keys == 6;
}
is(scalar(keys %on), 3, 'keys on each of the 3 servers');
ok($memd->set_multi(map { [$_, "v$_"] } @keys), 'set_multi');

for my $how (['get_multi', sub { $memd->get_multi(@keys) }],
             ['set_multi', sub { $memd->set_multi(map { [$_, "w$_"] } @keys) }]) {
    my ($name, $call) = @$how;
    @seen = ();
    my $before = clock_gettime(CLOCK_MONOTONIC);
    $call->();
    my $after = clock_gettime(CLOCK_MONOTONIC);
    is(scalar @seen, 3, "$name: one record per server") or next;
    my $first_sub = $seen[0][0];
    cmp_ok($after - $before, '>=', 3 * $nap - $slack, "$name: the subs ran inside the method call");
    for my $i (0 .. $#seen) {
        my ($now, $rec) = @{ $seen[$i] };
        my $end   = $now - $rec->{ended_ago};
        my $start = $end - $rec->{duration};
        my $what  = sprintf '%s record %d (%s): ended %.2f ms after the call began, started %.2f ms after,'
            . ' the sub called %.2f ms after', $name, $i, $rec->{server},
            1e3 * ($end - $before), 1e3 * ($start - $before), 1e3 * ($now - $before);
        ok(defined $rec->{ended_ago} && $rec->{ended_ago} >= 0, "$name record $i: ended_ago set");
        is($rec->{op}, $name, "$name record $i: op");
        # ended before the first sub was called (not shifted by the subs before it) ...
        cmp_ok($end, '<=', $first_sub + $slack, "$what: the exchange ended before the first sub ran");
        # ... and inside the method call
        cmp_ok($end, '>=', $before - $slack, "$name record $i: the exchange ended after the call began");
        cmp_ok($start, '>=', $before - $slack, "$name record $i: the exchange started after the call began");
        # measured at the sub's call: past the naps of the subs before it
        cmp_ok($rec->{ended_ago}, '>=', $i * $nap - $slack,
            "$name record $i: ended_ago counts the ${\ ($i * 1000 * $nap)} ms the subs before it took");
        # duration and duration_ns agree
        cmp_ok(abs($rec->{duration} * 1e9 - $rec->{duration_ns}), '<', 1, "$name record $i: duration_ns is duration");
    }
}

# the record a sub keeps: its ended_ago stays as it was when the sub got it
{
    my $kept;
    my $m = Mcpool->new({ servers => [$srv[0]], on_operation => sub { $kept = $_[0] } });
    $m->get("${p}none");
    ok(defined $kept && defined $kept->{ended_ago}, 'a single record: ended_ago set');
    my $was = $kept->{ended_ago};
    sleep 0.01;
    is($kept->{ended_ago}, $was, '... a number, not measured again later');
    is_deeply([sort keys %$kept],
        [sort qw(op keys hits server protocol duration duration_ns outcome error_class error
            bytes_sent bytes_received ended_ago)],
        '... the documented fields, no others');
}

done_testing();
