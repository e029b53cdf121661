# Expiration times memcached cannot take as they are, against real memcached: it reads a text
# or meta exptime as a signed 32-bit number, so one above 2**31-1 (an absolute time after
# 2038-01-19, or a wrapped computation) used to be stored as a time already past: the set
# answered true and the value was gone. The core sends the farthest expiry memcached keeps
# instead (src/proto/mod.rs, wire_ttl). Cache::Memcached::Fast wraps it
# modulo 2**32 (2**32 + 100 becomes 100 seconds) or loses the value the same way.
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use McpoolTest;
use Mcpool;

my $srv = start_memcached();
my $p = unique('exp');

for my $protocol (qw(text meta binary)) {
    my $m = Mcpool->new({ servers => [$srv], protocol => $protocol });
    for my $t (2**31 - 1, 2**31, 2**32 - 1, 2**32 + 100, 2**40) {
        my $k = "${p}$protocol-$t";
        ok($m->set($k, 'v', $t), "$protocol: set with exptime $t");
        is($m->get($k), 'v', '... the value is there');
        my @r = $m->set_multi([ "$k-m", 'w', $t ]);
        is($m->get("$k-m"), 'w', '... and through set_multi');
        ok($m->set("$k-t", 'x'), '... a plain set');
        ok($m->touch("$k-t", $t), '... touched with it');
        is($m->get("$k-t"), 'x', '... still there');
        is($m->gat($t, "$k-t"), 'x', '... gat with it');
        is($m->get("$k-t"), 'x', '... still there after gat');
    }
    ok($m->set("${p}$protocol-neg", 'v', -1), "$protocol: a negative exptime");
    ok(!defined $m->get("${p}$protocol-neg"), '... still expires at once');
}

done_testing;
