# Under Cache::Memcached's format with utf8 off (its preset's default), a character string is
# stored as Perl holds it, as Cache::Memcached (`use bytes`) writes it: an upgraded string as
# its UTF-8 bytes (a wide character too), a downgraded one as its bytes; so both clients
# store the same bytes for the same string and read each other's alike (tester finding
# migration 1: Mcpool stored Latin-1 and croaked on wide characters). Cache::Memcached::Fast's
# format keeps downgrading (and croaking on wide characters), as that client does.
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use McpoolTest;
use Mcpool;
use Cache::Memcached;
use Cache::Memcached::Fast;

my $srv = start_memcached();
my $m   = Mcpool->new({ servers => [$srv], preset => 'cache-memcached' });
my $cm  = Cache::Memcached->new({ servers => [$srv] });
my $raw = Cache::Memcached::Fast->new({ servers => [$srv] });    # the stored bytes
my $p   = unique('cmstr');

my $upgraded = "caf\x{e9}";
utf8::upgrade($upgraded);
my %strings = (
    upgraded   => $upgraded,
    downgraded => "caf\xe9",
    wide       => "snow \x{2603} \x{1F600}",
    ascii      => 'plain',
);
for my $name (sort keys %strings) {
    my $s = $strings{$name};
    ok($cm->set("$p:cm:$name", $s), "Cache::Memcached stores $name");
    ok($m->set("$p:m:$name", $s), "Mcpool stores $name") or diag $m->last_error;
    my ($theirs, $ours) = ($raw->get("$p:cm:$name"), $raw->get("$p:m:$name"));
    is(unpack('H*', $ours), unpack('H*', $theirs), "$name: the same bytes as Cache::Memcached");
    is(unpack('H*', $m->get("$p:cm:$name")), unpack('H*', $cm->get("$p:m:$name")),
       "$name: each reads the other's alike");
    ok(!utf8::is_utf8($m->get("$p:m:$name")), "$name: read back as bytes, as Cache::Memcached");
}
is($raw->get("$p:m:upgraded"), "caf\xc3\xa9", 'an upgraded string is its UTF-8 bytes');
is($raw->get("$p:m:downgraded"), "caf\xe9", 'a downgraded one its Latin-1 bytes');

# utf8 => 1 given still wins (text kind, decoded on reading)
my $u = Mcpool->new({ servers => [$srv], preset => 'cache-memcached', utf8 => 1 });
ok($u->set("$p:u", $strings{wide}), 'utf8 => 1 stores text');
is($u->get("$p:u"), $strings{wide}, 'and reads it back as characters');

# Cache::Memcached::Fast's format: downgraded, a wide character croaks, as that client
my $f = Mcpool->new({ servers => [$srv], preset => 'cache-memcached-fast' });
ok($f->set("$p:f", $upgraded), 'cache-memcached-fast stores an upgraded Latin-1 string');
is($raw->get("$p:f"), "caf\xe9", 'as Latin-1 bytes, as Cache::Memcached::Fast');
eval { $f->set("$p:fw", $strings{wide}) };
like($@, qr/Wide character/, 'a wide character croaks there');

done_testing;
