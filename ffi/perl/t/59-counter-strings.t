# A counter's new value is returned as Cache::Memcached::Fast returns it: the decimal string
# memcached sent, zero as "0E0" (tester finding perlteam 1: Mcpool returned a number, so a
# JSON encoder wrote "views":6 where Cache::Memcached::Fast's callers got "views":"6").
# Side by side with Cache::Memcached::Fast on one memcached: incr, decr, incr_multi,
# decr_multi in list and scalar context, and incr_or_init alike.
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use McpoolTest;
use Mcpool;
use JSON::PP;
use Cache::Memcached::Fast;

my $srv = start_memcached();
my $p   = unique('counter-str');
my $J   = JSON::PP->new->canonical;

my %client = (
    mcpool => Mcpool->new({ servers => [$srv], namespace => "${p}m:" }),
    cmf    => Cache::Memcached::Fast->new({ servers => [$srv], namespace => "${p}c:" }),
);
my %seen;
for my $name (sort keys %client) {
    my $m = $client{$name};
    $m->set($_, 5) for qw(a b z);
    $m->set('zero', 1);
    my @list = $m->incr_multi('a', ['b', 2]);
    $seen{$name} = $J->encode({
        incr       => scalar $m->incr('a'),
        decr       => scalar $m->decr('a', 2),
        to_zero    => scalar $m->decr('zero'),
        incr_multi => scalar $m->incr_multi('a', 'b'),
        decr_multi => scalar $m->decr_multi(['z', 5]),
        list       => \@list,
        big        => scalar do { $m->set('big', '18446744073709551614'); $m->incr('big') },
    });
}
is($seen{mcpool}, $seen{cmf}, "the counters' values encode as Cache::Memcached::Fast's")
    or diag "mcpool $seen{mcpool}\ncmf    $seen{cmf}";
like($seen{mcpool}, qr/"incr":"7"/, '... a string: "7"');
like($seen{mcpool}, qr/"to_zero":"0E0"/, '... zero as "0E0"');
my $m = $client{mcpool};
is($m->incr_or_init('ioi', 1, 7), '7', 'incr_or_init: the initial value');
is($J->encode([$m->incr_or_init('ioi', 1, 7)]), '["8"]', '... then a string, as incr\'s');
done_testing;
