# CHI::Driver::Mcpool and CHI's own CHI::Driver::Memcached::Fast, side by side on one real
# memcached: every key either can store is stored by both under the same wire key, so each
# reads what the other wrote (user:1, a/b, x=y&z, UTF-8, long keys CHI digests). A key with
# a space, a control byte or "%" is escaped here (%XX), never sent as another key's name.
use strict;
use warnings;
use utf8;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";

BEGIN {
    require McpoolTest;
    McpoolTest::needs('libchi-perl libchi-driver-memcached-perl libcache-memcached-fast-perl',
        qw(CHI Cache::Memcached::Fast CHI::Driver::Memcached::Fast));
}

use McpoolTest;
binmode Test::More->builder->$_, ':encoding(UTF-8)' for qw(output failure_output todo_output);
use IO::Socket::INET;

my $srv = start_memcached();
my $ns  = unique('chi');
$ns =~ s/-$//;

# memcached's own list of the keys it holds (lru_crawler metadump %-encodes them), each once:
# an item flushed but not yet reclaimed can be listed beside the one set after the flush
# under the same key (a CI run saw "k k")
sub wire_keys {
    my $s = IO::Socket::INET->new(PeerAddr => $srv, Timeout => 2) or die "connect $srv: $!";
    print $s "lru_crawler metadump all\r\n";
    my @k;
    while (my $l = <$s>) {
        last if $l =~ /^(END|ERROR)/;
        next unless $l =~ /^key=(\S+)/;
        (my $k = $1) =~ s/%([0-9A-Fa-f]{2})/chr hex $1/ge;
        push @k, $k;
    }
    my %seen;
    return join ' ', grep { !$seen{$_}++ } sort @k;
}

sub flush {
    my $s = IO::Socket::INET->new(PeerAddr => $srv, Timeout => 2) or die "connect $srv: $!";
    print $s "flush_all\r\n";
    scalar <$s>;
}

my %o = (servers => [$srv], namespace => $ns, on_set_error => 'die', on_get_error => 'die');
my $cmf = CHI->new(driver => 'Memcached::Fast', %o);
my $mcp = CHI->new(driver => 'Mcpool', %o);
is($mcp->max_key_length, $cmf->max_key_length, 'max_key_length: the same as the CMF driver');

# the longest key that fits memcached's 250 bytes after "$ns:"
my $room = 250 - length("$ns:");
for my $k ('user:1', 'a/b', 'x=y&z', 'plain_key', 'ключ', "caf\x{e9}", 'k' x 150, 'k' x $room,
    '日本' x int($room / 6))
{
    my $name = length($k) > 20 ? substr($k, 0, 10) . '... (' . length($k) . ' characters)' : $k;
    flush();
    $cmf->set($k, "cmf $k");
    my $by_cmf = wire_keys();
    is($mcp->get($k), "cmf $k", "$name: written by the CMF driver, read by Mcpool's");
    flush();
    $mcp->set($k, "mcp $k");
    is(wire_keys(), $by_cmf, "$name: ... under the same wire key ($by_cmf)");
    is($cmf->get($k), "mcp $k", "$name: written by Mcpool's, read by the CMF driver");
}

# What the CMF driver cannot store: escaped, so it is stored, and no two keys meet
flush();
my %v = ('a b' => 1, 'a%20b' => 2, "t\tab" => 3, 'a%b' => 4, "del\x7f" => 5);
$mcp->set($_, "v$v{$_}") for sort keys %v;
is($mcp->get($_), "v$v{$_}", "'$_' (escaped): read back, its own value") for sort keys %v;
is(wire_keys(), join(' ', sort map { "$ns:$_" } qw(a%20b a%2520b t%09ab a%25b del%7F)),
    'their wire keys: %XX, "%" itself as %25');

# A key too long for memcached (the CMF driver fails it): digested here, never refused
my $long = 'k' x ($room + 1);
ok(!eval { $cmf->set($long, 'x'); 1 } || !defined $cmf->get($long),
    'a key one byte too long: the CMF driver cannot store it');
$mcp->set($long, 'long');
is($mcp->get($long), 'long', '... Mcpool\'s digests it: stored and read back');

# sanitize_keys => 0: every key as it is; one with a space fails, as with the CMF driver
my $raw = CHI->new(driver => 'Mcpool', %o, sanitize_keys => 0);
ok(!eval { $raw->set('a b', 'x'); 1 }, 'sanitize_keys => 0: a key with a space fails (on_set_error)');
like($@, qr/a b/, '... naming it');
flush();
$raw->set('a%b', 'pct');
is($cmf->get('a%b'), 'pct', "sanitize_keys => 0: 'a%b' as the CMF driver sends it");

# The core's sanitize_keys (which this driver does not use) is Whalin's URL-encoding of every
# key, as its description says
like(Mcpool::option_doc('sanitize_keys'), qr/every key as Whalin's sanitizeKeys/,
    "the core's sanitize_keys: described as encoding every key");
flush();
Mcpool->new({ servers => [$srv], sanitize_keys => 1 })->set('user:1', 'w');
is(wire_keys(), 'user%3A1', '... and it does: user:1 is sent as user%3A1');

stop_memcached($srv);
done_testing;
