# Servers that change at run time: $memd->set_servers (Cache::Memcached's) replaces the list
# through the core's atomic set_servers; kept servers keep their connections; a bad list is
# refused and the old one stays; options changed later (which rebuild the client) keep the
# new list. Real memcached processes.
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use McpoolTest;
use Mcpool;

my $a = start_memcached();
my $b = start_memcached();
my $p = unique('topo');

my $m = Mcpool->new({ servers => [$a] });
ok($m->set("${p}k", 'v'), 'a set on the first list');
is_deeply([$m->server_labels], [$a], 'one server');

ok($m->set_servers([$a, [$b, 2]]), 'set_servers with a weighted entry');
is_deeply([$m->server_labels], [$a, $b], 'the new list, in order');
for my $i (1 .. 30) {
    ok($m->set("${p}n$i", "v$i"), "set $i on the new list") or last;
}
is($m->get("${p}n$_"), "v$_", "get $_ on the new list") for 1 .. 30;

eval { $m->set_servers([$a, 'host:notaport']) };
like($@, qr/set_servers.*notaport/, 'a bad list is refused, naming the entry');
eval { $m->set_servers([]) };
like($@, qr/set_servers: the server list is empty/, 'an empty list is refused');
is_deeply([$m->server_labels], [$a, $b], 'the old list stays');

# A bad weight in any spelling croaks naming the entry ([addr, 0] and { weight => 0 } named
# none: Cache::Memcached::Fast's bare 'Server weight should be positive'), from set_servers
# and from new, and the old list stays.
my $bad = '127.0.0.1:12';
for my $spelling ([$bad, 0], [$bad, -1], { address => $bad, weight => 0 }, "$bad:0",
                  [$bad, 2**33], [$bad, 'x']) {
    my $what = ref $spelling eq 'ARRAY' ? "[$spelling->[0], $spelling->[1]]"
             : ref $spelling ? "{ weight => $spelling->{weight} }" : "'$spelling'";
    ok(!eval { $m->set_servers([$a, $spelling]); 1 }, "set_servers with $what croaks");
    like($@, qr/Mcpool->set_servers: .*\Q$bad\E.*weight/i, '... naming the entry');
    ok(!eval { Mcpool->new({ servers => [$a, $spelling] }); 1 }, "new with $what croaks");
    like($@, qr/Mcpool->new: .*\Q$bad\E.*weight/i, '... naming the entry');
}
like(do { eval { $m->set_servers([[$bad, 0]]) }; $@ }, qr/weight should be positive/,
     "... in Cache::Memcached::Fast's words for a weight beside the address");
is_deeply([$m->server_labels], [$a, $b], 'the old list stays');

ok($m->set_servers([$a]), 'back to one server');
is($m->get("${p}k"), 'v', 'the value is still there');
# namespace rebuilds the core client from the configuration: it keeps the new list
$m->namespace('ns:');
is_deeply([$m->server_labels], [$a], 'a rebuild keeps the list set_servers gave');

# An address listed twice (a double share) is one server in the reports (docs/metrics.md):
# the core sums its entries' counters and merges their states.
{
    my $d = Mcpool->new({ servers => [$a, $a, $b] });
    my $q = unique('dup');
    for my $i (1 .. 40) {
        $d->set("$q$i", $i);
        $d->get("$q$i");
    }
    my $mx = $d->metrics;
    is_deeply([sort keys %$mx], [sort($a, $b)], 'metrics: one entry per address');
    my $ops = 0;
    $ops += $mx->{$_}{operations} for keys %$mx;
    is($ops, 80, 'metrics: every operation counted');
    my $st = $d->server_states;
    is_deeply([map { $_->{server} } @$st], [$a, $b], 'server_states: one per address, in order');
}

done_testing();
