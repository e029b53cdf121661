# set_multi of mixed values (integers, floats, strings with the UTF-8 flag on and off,
# Storable references, booleans) is one pipelined call that stores each item with exactly the
# flags and bytes the single set stores, under the cache-memcached-fast, cache-memcached and
# mcpool value formats. The batch used to store some items alone: the first integer under a
# format without integers went by itself, then the rest (tester finding retest13 7).
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use McpoolTest;
use Mcpool;
use IO::Socket::INET;

my $srv = start_memcached();
my $p   = unique('smk');

# Values of every kind mcp_value tells apart; an integer first (the one once stored alone).
sub values_for {
    my $utf8 = shift;
    my $latin = "caf\x{e9}";
    utf8::upgrade($latin);    # the UTF-8 flag on, every character below 256
    my @v = (
        [ int   => 42 ],
        [ neg   => -7 ],
        [ big   => ~0 ],                 # 2**64-1, an unsigned IV
        [ float => 0.1 + 0.2 ],
        [ half  => 1.5 ],
        [ plain => 'hello' ],
        [ digit => '12' ],               # a string, though it looks like a number
        [ bytes => "\xff\xfe\x00" ],     # the UTF-8 flag off, not UTF-8
        [ latin => $latin ],
        [ long  => 'abcdefgh' x 4000 ],  # over the compression threshold
        [ aref  => [ 1, 'two', { 3 => 4 } ] ],
        [ sref  => \'scalar' ],
        [ undef => undef ],
        [ int2  => 1000 ],
    );
    push @v, [ wide => "smile \x{263a}" ] if $utf8;    # utf8 => 0 croaks on it, as CMF does
    if ($] >= 5.036) {
        push @v, [ yes => !!1 ], [ no => !!0 ];
    }
    return @v;
}

my $round = 0;
for my $format (qw(cache-memcached-fast cache-memcached mcpool)) {
    for my $utf8 (0, 1) {
        my $name = "$format, utf8 => $utf8";
        my @v    = values_for($utf8);
        $round++;
        my $s = "${p}$round-s-";    # stored by single sets
        my $b = "${p}$round-b-";    # stored by one set_multi
        my @recs;
        # fresh clients: the batch is the first store its client makes
        my $batch = Mcpool->new({ servers => [$srv], value_format => $format, utf8 => $utf8,
                                  on_operation => sub { push @recs, $_[0] } });
        my $single = Mcpool->new({ servers => [$srv], value_format => $format, utf8 => $utf8 });

        my @r = $batch->set_multi(map { [ $b . $_->[0], $_->[1] ] } @v);
        is_deeply(\@r, [ (1) x @v ], "$name: set_multi stores every item");
        is(scalar @recs, 1, "$name: in one pipelined exchange") or diag explain \@recs;
        is($recs[0]{keys}, scalar @v, "$name: ... of every item") if @recs;
        ok($single->set($s . $_->[0], $_->[1]), "$name: set $_->[0]") for @v;

        my $raw = raw_get_multi($srv, map { ($s . $_->[0], $b . $_->[0]) } @v);
        for (@v) {
            my $k = $_->[0];
            ok($raw->{ $b . $k }, "$name: $k is stored");
            is_deeply($raw->{ $b . $k }, $raw->{ $s . $k },
                "$name: $k: the flags and bytes of the single set")
                or diag explain [ $raw->{ $b . $k }, $raw->{ $s . $k } ];
        }
        # and read back as the single set's items are
        my $got_b = $batch->get_multi(map { $b . $_->[0] } @v);
        my $got_s = $batch->get_multi(map { $s . $_->[0] } @v);
        is_deeply({ map { $_ => $got_b->{ $b . $_ } } map { $_->[0] } @v },
                  { map { $_ => $got_s->{ $s . $_ } } map { $_->[0] } @v },
                  "$name: get_multi reads the same values");

        # per-key results as before: scalar context a hash, add_multi's "not stored"
        my $h = $batch->set_multi(map { [ $b . $_->[0], $_->[1] ] } @v);
        is_deeply($h, { map { ($b . $_->[0] => 1) } @v }, "$name: set_multi in scalar context");
        @r = $batch->add_multi([ $b . 'int', 5 ], [ "${b}new", 6 ], [ $b . 'aref', [] ]);
        is_deeply(\@r, [ '', 1, '' ], "$name: add_multi: '' for an existing key, 1 for a new one");
        is($batch->get("${b}new"), 6, "$name: add_multi's integer reads back");
        $raw = raw_get_multi($srv, "${b}int", "${b}new");
        is($raw->{"${b}new"}[1], '6', "$name: add_multi stored the integer's text");
        is_deeply($raw->{"${b}int"}, raw_get_multi($srv, "${s}int")->{"${s}int"}, "$name: add_multi changed nothing");
    }
}

# A refused item fails alone; the rest of the batch is stored, as before.
{
    my $m = Mcpool->new({ servers => [$srv] });
    my @r = $m->set_multi([ "${p}ok1", 1 ], [ "${p}bad key", 2 ], [ "${p}ok2", [3] ]);
    is_deeply(\@r, [ 1, undef, 1 ], 'a bad key fails alone');
    like(Mcpool::last_error(), qr/bad key/, '... last_error names it');
    is_deeply($m->get_multi("${p}ok1", "${p}ok2"), { "${p}ok1" => 1, "${p}ok2" => [3] },
        '... the others are stored');
    is_deeply([ $m->set_multi ], [], 'an empty set_multi');
}

# The real Cache::Memcached::Fast reads the batch's items as it reads the single set's.
SKIP: {
    skip 'Cache::Memcached::Fast is not installed', 1
        unless eval { require Cache::Memcached::Fast; 1 };
    my @v   = values_for(1);
    my $cmf = Cache::Memcached::Fast->new({ servers => [$srv], utf8 => 1 });
    # round 2: cache-memcached-fast with utf8 => 1
    my %b = %{ $cmf->get_multi(map { "${p}2-b-$_->[0]" } @v) };
    my %s = %{ $cmf->get_multi(map { "${p}2-s-$_->[0]" } @v) };
    is_deeply({ map { (substr($_, length "${p}2-b-") => $b{$_}) } keys %b },
              { map { (substr($_, length "${p}2-s-") => $s{$_}) } keys %s },
              'Cache::Memcached::Fast reads the same values');
}

done_testing();
