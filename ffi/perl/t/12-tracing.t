# fail_open (a core option, by name) and on_operation (docs/tracing.md): an outage answered
# as misses and not stored, counted; one record per exchange, as a hash reference.
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use McpoolTest;
use Mcpool;
use IO::Socket::INET;

my $srv = start_memcached();
my $p = unique('tr');

sub closed_port {
    my $s = IO::Socket::INET->new(Listen => 1, LocalAddr => '127.0.0.1', LocalPort => 0) or die $!;
    my $port = $s->sockport;
    close $s;
    return "127.0.0.1:$port";
}

# ----- on_operation: the records' fields -----
{
    my @recs;
    my $memd = Mcpool->new({ servers => [$srv], on_operation => sub { push @recs, $_[0] } });
    isa_ok($memd, 'Mcpool', 'a traced client');
    ok($memd->set("${p}k", 'hello'), 'set');
    is($memd->get("${p}k"), 'hello', 'get');
    ok(!defined $memd->get("${p}none"), 'get of a missing key');
    my $h = $memd->get_multi("${p}k", "${p}none");
    is_deeply($h, { "${p}k" => 'hello' }, 'get_multi');
    is(scalar @recs, 4, 'one record per exchange') or diag explain \@recs;
    my ($set, $hit, $miss, $multi) = @recs;
    is($set->{op}, 'set', 'set: op');
    is($set->{outcome}, 'stored', 'set: outcome');
    is($set->{server}, $srv, 'set: server');
    is($set->{protocol}, 'text', 'set: protocol');
    is($set->{keys}, 1, 'set: keys');
    cmp_ok($set->{bytes_sent}, '>', length("${p}k"), 'set: bytes sent');
    cmp_ok($set->{bytes_received}, '>=', 8, 'set: bytes received (STORED)');
    # When the exchange ended, as seconds before the record's delivery (tester finding observe 2).
    ok(defined $set->{ended_ago} && $set->{ended_ago} >= 0 && $set->{ended_ago} < 5,
       'set: ended_ago') or diag explain $set;
    cmp_ok($set->{duration}, '>', 0, 'set: duration');
    ok(!defined $set->{error} && !defined $set->{error_class}, 'set: no error');
    is($hit->{outcome}, 'hit', 'get: hit');
    is($miss->{outcome}, 'miss', 'get: miss');
    is($multi->{op}, 'get_multi', 'get_multi: op');
    is($multi->{keys}, 2, 'get_multi: keys');
    is($multi->{hits}, 1, 'get_multi: hits');

    # A refused key: an error record without a server; the call's own error unchanged.
    @recs = ();
    my $r = eval { $memd->get("bad key") };
    is(scalar @recs, 1, 'a refused key gives one record');
    is($recs[0]{outcome}, 'error', '... an error');
    is($recs[0]{error_class}, 'CLIENT_ERROR', '... of the client-error class');
    ok(!defined $recs[0]{server}, '... without a server');

    # A callback that dies: warned about and counted, never propagated.
    my @w;
    local $SIG{__WARN__} = sub { push @w, @_ };
    my $dies = Mcpool->new({ servers => [$srv], on_operation => sub { die "hook failed\n" } });
    ok($dies->set("${p}d", 'v'), 'the call succeeds although the hook dies');
    like("@w", qr/on_operation died: hook failed/, 'the death is warned about');
    is($dies->_state->{on_operation_errors}, 1, 'and counted');
    ok(!eval { Mcpool->new({ servers => [$srv], on_operation => 'nope' }); 1 },
        'on_operation must be a code reference');
}

# ----- fail_open: an unreachable server -----
{
    my $down = closed_port();
    my @recs;
    my $memd = Mcpool->new({ servers => [$down], fail_open => 1, on_operation => sub { push @recs, $_[0] } });
    my @e;
    my $ok = eval {
        ok(!defined $memd->get("${p}k"), 'fail_open: get is a miss');
        ok(!$memd->set("${p}k", 'v'), 'fail_open: set is not stored');
        ok(!$memd->delete("${p}k"), 'fail_open: delete is false');
        my $n = $memd->incr("${p}k");
        ok(defined $n && !$n, 'fail_open: incr is false (a missing counter), not undef (an error)');
        is_deeply($memd->get_multi("${p}a", "${p}b"), {}, 'fail_open: get_multi has no keys');
        my $c = $memd->set_counter("${p}c", 5);
        ok(defined $c && !$c, 'fail_open: set_counter is not stored (false), not undef (an error)');
        is($memd->last_error, '', '... and leaves no error message behind')
            or diag $memd->last_error;
        1;
    };
    ok($ok, 'fail_open: no call died') or diag $@;
    my $m = $memd->metrics->{$down};
    is($m->{fail_open_misses}, 3, 'fail_open_misses counted (get, 2 of get_multi)');
    is($m->{fail_open_not_stored}, 4, 'fail_open_not_stored counted (set, delete, incr, set_counter)');
    ok(@recs >= 5 && !grep({ $_->{outcome} ne 'failed_open' } @recs), 'every record failed open')
        or diag explain \@recs;
    ok(!grep({ ($_->{error_class} // '') !~ /^(CONNECTION|TIMEOUT)$/ } @recs), '... as a connection or timeout error');

    # Without fail_open: the same outage is an error.
    my $strict = Mcpool->new({ servers => [$down] });
    ok(!defined $strict->get("${p}k"), 'Cache::Memcached::Fast semantics: undef');
}

# ----- fail_open: a killed memcached -----
{
    my $s2 = start_memcached();
    my $memd = Mcpool->new({ servers => [$s2], fail_open => 1, io_timeout => 0.3 });
    ok($memd->set("${p}x", 'v'), 'set before the kill');
    stop_memcached($s2);
    ok(!defined $memd->get("${p}x"), 'after the kill: a miss');
    ok(!$memd->set("${p}x", 'w'), '... and not stored');
    my $m = $memd->metrics->{$s2};
    is($m->{fail_open_misses}, 1, 'the miss counted');
    is($m->{fail_open_not_stored}, 1, 'the write counted');
}

done_testing();
