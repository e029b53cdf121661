# Refusals name what the caller gave (tester findings retest40 1, 2, 6; retest39 7's Perl part):
# - set_counter's value, set_bytes' flags and the _with_version calls' version: a refused one
#   croaks naming the call, the key and the value as given, a dualvar by the number it is read
#   by (they named dualvar(-1, '7') as '7', a value that would have been taken, and the
#   version croaks named neither key nor value);
# - set_multi_noreply refused for its time: every key is deleted, in one batch (the core's
#   mcpool_client_store_expiry_checked_multi), and last_error says so of the batch's other
#   keys too, as set_multi's and C's do (it named only the first key deleted);
# - expiry_from_now of a duration whose moment is beyond 2**63-1 croaks naming it as given
#   (it answered 9223372036854775807), and a string that is not a number is an "invalid
#   duration" as its other refusals (it was an "invalid expiration time").
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use McpoolTest;
use Mcpool;
use Scalar::Util qw(dualvar);

my $srv = start_memcached();
my $p   = unique('named');

{
    package Fetches;
    sub TIESCALAR { my ($c, $v) = @_; bless { v => $v, n => 0 }, $c }
    sub FETCH { my $s = shift; $s->{n}++; $s->{v} }
}

# ----- retest40 1: set_counter, set_bytes' flags, the versions -----
{
    my $m = Mcpool->new({ servers => [$srv], namespace => $p });
    my $k = 'ctr';
    ok($m->set_counter($k, 5), 'a counter');
    for my $case ([ 'dualvar(-1, "7")', dualvar(-1, '7'), '-1' ],
                  [ 'dualvar(1.5, "7")', dualvar(1.5, '7'), '1.5' ],
                  [ '-1', -1, '-1' ], [ '"abc"', 'abc', 'abc' ]) {
        my ($name, $v, $shown) = @$case;
        ok(!eval { $m->set_counter($k, $v); 1 }, "set_counter($name) croaks");
        is($@ =~ s/ at \S+ line \d+\.\n\z//r,
            qq{set_counter "$k": the value must be a decimal integer from 0 to 18446744073709551615 }
              . qq{(memcached's counters are unsigned 64-bit), not '$shown'},
            '... naming the call, the key and the value as read');
    }
    ok(!eval { $m->set_counter($k, undef); 1 }, 'set_counter(undef) croaks');
    like($@, qr/^set_counter "\Q$k\E": the value is undef, not an integer/, '... naming the key');
    my $tied = tie my $tv, 'Fetches', dualvar(-1, '7');
    ok(!eval { $m->set_counter($k, $tv); 1 }, 'a tied refused value croaks');
    like($@, qr/, not '-1'/, '... named by its number');
    is($tied->{n}, 1, '... fetched once');
    is($m->get($k), 5, 'the counter was left as it was');

    my $b = 'bytes';
    for my $case ([ 'dualvar(-1, "7")', dualvar(-1, '7'), q{'-1'} ],
                  [ 'dualvar(2**32, "7")', dualvar(2**32, '7'), q{'4294967296'} ],
                  [ 'undef', undef, 'undef' ], [ '"4abc"', '4abc', q{'4abc'} ]) {
        my ($name, $f, $shown) = @$case;
        ok(!eval { $m->set_bytes($b, 'v', $f); 1 }, "set_bytes flags $name croak");
        is($@ =~ s/ at \S+ line \d+\.\n\z//r,
            qq{set_bytes "$b": flags must be an integer from 0 to 4294967295 (2**32-1), not $shown},
            '... naming the call, the key and the flags as read');
    }
    $tied = tie my $tf, 'Fetches', dualvar(-5, '9');
    ok(!eval { $m->set_bytes($b, 'v', $tf); 1 }, 'tied refused flags croak');
    like($@, qr/, not '-5'/, '... named by their number');
    is($tied->{n}, 1, '... fetched once');
    is($m->get($b), undef, 'nothing stored by any of them');
    ok($m->set_bytes($b, 'v', dualvar(4, '9')), 'dualvar(4, "9") flags: taken by the number');
    is(($m->get_bytes($b))[1], 4, '... stored as 4');

    # the versions (refused before anything is sent: any protocol, any server version)
    my $mm = Mcpool->new({ servers => [$srv], protocol => 'meta', namespace => $p });
    my %calls = (
        set_with_version    => sub { $mm->set_with_version('ver', 'v', $_[0]) },
        delete_with_version => sub { $mm->delete_with_version('ver', $_[0]) },
        incr_with_version   => sub { $mm->incr_with_version('ver', 1, $_[0]) },
        decr_with_version   => sub { $mm->decr_with_version('ver', 1, $_[0]) },
    );
    for my $call (sort keys %calls) {
        for my $case ([ 'dualvar(-1, "7")', dualvar(-1, '7'), q{'-1'} ],
                      [ '2.5', 2.5, q{'2.5'} ], [ 'undef', undef, 'undef' ]) {
            my ($name, $v, $shown) = @$case;
            ok(!eval { $calls{$call}->($v); 1 }, "$call version $name croaks");
            is($@ =~ s/ at \S+ line \d+\.\n\z//r,
                qq{$call "ver": the version must be an integer from 0 to 2**64-1, not $shown},
                '... naming the call, the key and the version as read');
        }
        $tied = tie my $tver, 'Fetches', dualvar(-2, '7');
        ok(!eval { $calls{$call}->($tver); 1 }, "$call: a tied refused version croaks");
        like($@, qr/, not '-2' at /, '... named by its number');
        is($tied->{n}, 1, '... fetched once');
    }
}

# ----- retest40 2: set_multi_noreply refused for its time -----
{
    my $m = Mcpool->new({ servers => [$srv], namespace => $p });
    my $deleted = qr/; nothing was stored and the key was deleted, as memcached deletes it when it refuses a set/;
    my $load = sub { ok($m->set($_, 'old'), "old $_") for @_ };
    my @cases = (
        [ 'one refused number', [ [ 'a', 'n', 2**31 ], [ 'b', 'n', 2**31 ] ],
          qr/^set_multi_noreply "a": invalid ttl: 2147483648 is above 2147483647, the largest expiry memcached can honour \(it would read it as -2147483648 and expire at once\)$deleted, and so was the other key of this batch refused for its ttl$/ ],
        [ 'one number, as written', [ [ 'a', 'n', 2147483647.5 ], [ 'b', 'n', '2147483647.5' ], [ 'c', 'n', 2147483648 ] ],
          qr/^set_multi_noreply "a": invalid ttl: 2147483647\.5 is above 2147483647, .*$deleted, and so were the 2 other keys of this batch refused for their ttl$/ ],
        [ 'past 64 bits', [ [ 'a', 'n', 1e30 ], [ 'b', 'n', 1e30 ] ],
          qr/^set_multi_noreply "a": invalid ttl: 1e\+30 is above 2147483647, the largest expiry memcached can honour$deleted, and so was the other key of this batch refused for its ttl$/ ],
        [ 'not a number', [ [ 'a', 'n', '5m' ], [ 'b', 'n', '5m' ] ],
          qr/^set_multi_noreply "a": invalid expiration time: "5m" is not a number of seconds$deleted, and so was the other key of this batch refused for its ttl$/ ],
        [ 'a time that is not a number among none', [ [ 'a', 'n' ], [ 'b', 'n', '5m' ], [ 'c', 'n' ] ],
          qr/^set_multi_noreply "b": invalid expiration time: "5m" is not a number of seconds$deleted, and so were the 2 other keys of this batch refused for their ttl$/ ],
        [ 'a refused number before a non-number', [ [ 'a', 'n', 2**32 ], [ 'b', 'n', 'x' ] ],
          qr/^set_multi_noreply "a": invalid ttl: 4294967296 is above 2147483647, the largest expiry memcached can honour$deleted, and so was the other key of this batch refused for its ttl$/ ],
        [ 'a lone item', [ [ 'a', 'n', 2**32 ] ],
          qr/^set_multi_noreply "a": invalid ttl: 4294967296 is above 2147483647, the largest expiry memcached can honour$deleted$/ ],
    );
    for my $case (@cases) {
        my ($name, $items, $want) = @$case;
        $load->(map { $_->[0] } @$items);
        my @r = $m->set_multi_noreply(@$items);
        is_deeply(\@r, [], "$name: nothing returned");
        like(Mcpool::last_error(), $want, "$name: last_error names the time as given and says every key went");
        is_deeply($m->get_multi(map { $_->[0] } @$items), {}, "$name: every key deleted");
    }
    # a key the core refuses before a time that is not a number: the batch is still refused
    # for that time (only the number is checked before, never the key with it)
    $load->('b');
    my @r = $m->set_multi_noreply([ 'x' x 300, 'n', 300 ], [ 'b', 'n', '5m' ]);
    is_deeply(\@r, [], 'a refused key, then "5m": nothing returned');
    like(Mcpool::last_error(), qr/^set_multi_noreply "b": invalid expiration time: "5m" is not a number of seconds$deleted$/,
        '... last_error names the time');
    is($m->get('b'), undef, '... its key deleted, nothing stored');
    # a time it takes: stored, as before
    ok($m->set_multi_noreply([ 'a', 'x', 300 ], [ 'b', 'y', 300 ]), 'a time it takes: true');
    is_deeply($m->get_multi('a', 'b'), { a => 'x', b => 'y' }, '... stored');
    ok($m->set_multi_noreply([ 'a', 'x' ], [ 'b', 'y' ]), 'no time: true');
    is(Mcpool::last_error(), '', '... last_error empty');
}

# ----- retest40 6, retest39 7: expiry_from_now -----
{
    for my $case ([ '2**64', 2**64, '1.84467440737096e+19' ], [ '1e30', 1e30, '1e+30' ],
                  [ "'99999999999999999999'", '99999999999999999999', '99999999999999999999' ],
                  [ "'18446744073709551616'", '18446744073709551616', '18446744073709551616' ],
                  [ '2**63', 2**63, '9.22337203685478e+18' ],
                  [ '9223372036854775807', 9223372036854775807, '9223372036854775807' ],
                  [ '2**63-1 - now + 1000', 9223372036854775807 - time + 1000,
                    9223372036854775807 - time + 1000 ]) {
        my ($name, $d, $shown) = @$case;
        my $r = eval { Mcpool::expiry_from_now($d) };
        ok(!defined $r, "expiry_from_now($name) croaks") or diag "answered $r";
        is($@ =~ s/ at \S+ line \d+\.\n\z//r,
            "expiry_from_now: invalid duration: $shown is too long: from now it ends after 9223372036854775807, the latest unix time an expiry can name",
            '... in the core\'s words, naming the duration as given');
    }
    ok(!eval { Mcpool::expiry_from_now('abc'); 1 }, "expiry_from_now('abc') croaks");
    is($@ =~ s/ at \S+ line \d+\.\n\z//r, 'expiry_from_now: invalid duration: "abc" is not a number of seconds',
        '... an invalid duration, as its other refusals');
    ok(!eval { Mcpool::expiry_from_now(undef); 1 }, 'expiry_from_now(undef) croaks');
    is($@ =~ s/ at \S+ line \d+\.\n\z//r, 'expiry_from_now: invalid duration: undef is not a number of seconds',
        '... undef is no duration (never 0: expired at once)');
    ok(!eval { Mcpool::expiry_from_now(9**9**9); 1 }, 'expiry_from_now(Inf) croaks');
    like($@, qr/^expiry_from_now: invalid duration: Inf is not a finite number of seconds/, '... as before');
    # durations that fit: as before (the core reads the clock itself: within a second of
    # Perl's whole-second time either way)
    my $before = time - 1;
    my $at     = Mcpool::expiry_from_now(2**62);
    ok($at >= $before + 2**62 && $at <= time + 1 + 2**62, "2**62 s: the moment asked ($at)");
    $at = Mcpool::expiry_from_now(2**33);
    ok($at >= $before + 2**33 && $at <= time + 1 + 2**33, "2**33 s: the moment asked ($at)");
    is(Mcpool::expiry_from_now(60), 60, '60 s as they are');
    is(Mcpool::expiry_from_now(-1e30), Mcpool::expiry_from_now(-1), 'a very negative one: expired at once');
}

done_testing();
