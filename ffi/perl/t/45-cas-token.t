# cas / cas_multi read the CAS unique strictly, as incr's delta and set_counter's value: an
# integer by its value (an IV or UV, a float that is exactly one, a string of decimal digits).
# It was read with SvUV: "709abc" was 709, 707.5 was 707, " 711" was 711 (each stored as if
# the caller had that token from gets), -1 was 2**64-1 and 2**64 was clamped to 2**64-1
# (tester finding counters 3). Now anything else is refused before anything is sent: undef,
# last_error naming the call, the key and the token as given, the value untouched.
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use McpoolTest;
use Mcpool;

my $srv = start_memcached();

for my $proto (qw(text binary)) {
    my $m = Mcpool->new({ servers => [$srv], protocol => $proto });
    my $k = unique("cas-$proto");
    my @bad = (
        [ 'T+0.5',   sub { $_[0] + 0.5 } ],
        [ '"Tabc"',  sub { "$_[0]abc" } ],
        [ '" T"',    sub { " $_[0]" } ],
        [ '"+T"',    sub { "+$_[0]" } ],
        [ '"T.0"',   sub { "$_[0].0" } ],
        [ '-1',      sub { -1 } ],
        [ '"-1"',    sub { '-1' } ],
        [ '2**64',   sub { 2**64 } ],
        [ '"18446744073709551616"', sub { '18446744073709551616' } ],
        [ '"1e3"',   sub { '1e3' } ],
        [ '""',      sub { '' } ],
        [ 'undef',   sub { undef } ],
        [ 'NaN',     sub { 9**9**9 / 9**9**9 } ],
        [ 'a reference', sub { [ $_[0] ] } ],
    );
    for my $case (@bad) {
        my ($name, $make) = @$case;
        ok($m->set($k, 'orig'), "$proto: $name: the old value");
        my $token = $m->gets($k)->[0];
        my $bad = $make->($token);
        my @w;
        local $SIG{__WARN__} = sub { push @w, @_ };
        ok(!defined $m->cas($k, $bad, 'new'), "$proto: cas with the token $name: refused (undef)");
        like(Mcpool::last_error(),
             qr/^cas "\Q$k\E": the CAS unique must be a decimal integer from 1 to 18446744073709551615 \(as gets returns it\), not '/,
             '... last_error names the call, the key and why');
        is($m->get($k), 'orig', '... nothing stored');
        is($m->gets($k)->[0], $token, '... the item untouched (its CAS unique kept)');

        my @r = $m->cas_multi([ $k, $bad, 'new' ], [ "${k}2", $token, 'x' ]);
        ok(!defined $r[0], "$proto: cas_multi with the token $name: that item refused (undef)");
        like(Mcpool::last_error(),
             qr/^cas_multi "\Q$k\E": the CAS unique must be a decimal integer from 1 to 18446744073709551615/,
             '... last_error names it');
        is($m->get($k), 'orig', '... nothing stored');
        is("@w", '', '... no Perl warning');
    }

    # tokens by their value: an integer, its string, a float that is exactly it
    for my $case ([ 'an integer', sub { $_[0] + 0 } ], [ 'a string', sub { "$_[0]" } ],
                  [ 'an exact float', sub { $_[0] + 0.5 - 0.5 } ]) {
        my ($name, $make) = @$case;
        ok($m->set($k, 'orig'), "$proto: the old value");
        my $token = $make->($m->gets($k)->[0]);
        is($m->cas($k, $token, 'new'), 1, "$proto: cas with $name: stored");
        is($m->get($k), 'new', '... the new value');
        ok($m->set($k, 'orig'), "$proto: the old value");
        $token = $make->($m->gets($k)->[0]);
        is_deeply([ $m->cas_multi([ $k, $token, 'new' ]) ], [1], "$proto: cas_multi with $name: stored");
    }
    # 2**64-1 (the UV literal) is a token no item has yet: not stored (''), no error
    ok($m->set($k, 'orig'), "$proto: the old value");
    is($m->cas($k, 18446744073709551615, 'new'), '', "$proto: cas with 18446744073709551615: not stored ('')");
    is($m->get($k), 'orig', '... the value untouched');
    # 0 is no CAS unique: the core refuses it (unchanged)
    ok(!defined $m->cas($k, 0, 'new'), "$proto: cas with 0: refused (undef)");
    like(Mcpool::last_error(), qr/^cas "\Q$k\E": invalid cas: 0/, "... the core's message");
}

stop_memcached($srv);
done_testing;
