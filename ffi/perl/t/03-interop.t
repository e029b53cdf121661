# Values written by Cache::Memcached::Fast and Cache::Memcached are read by Mcpool and the
# reverse: plain, UTF-8, Storable and compressed (gzip, flag 2) values, on the same server.
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use McpoolTest;
use Mcpool;
use Cache::Memcached::Fast;
use Cache::Memcached;
use Encode ();

my $srv = start_memcached();
my %opt = (servers => [$srv], compress_threshold => 1000);
my $m   = Mcpool->new({ %opt, utf8 => 1 });
my $cmf = Cache::Memcached::Fast->new({ %opt, utf8 => 1 });
my $cm  = Cache::Memcached->new({ %opt });
my $raw = Cache::Memcached::Fast->new({ servers => [$srv] });    # no compression, no utf8
my $p   = unique('io');

my $chars = "na\x{ef}ve \x{263a} \x{1F600}";
my $big   = join '', map { chr(97 + ($_ * 7 + int($_ / 13)) % 26) } 0 .. 49_999;
my $ref   = { a => [1, 2, { b => 'c' }], s => "text" };
my %values = (
    plain      => 'hello, world',
    binary     => join('', map { chr } 0 .. 255),
    storable   => $ref,
    compressed => $big,
    bigref     => { big => $big },    # Storable and compressed: flags 1|2
);

# Cache::Memcached::Fast -> Mcpool and Mcpool -> Cache::Memcached::Fast
for my $name (sort keys %values) {
    my $v = $values{$name};
    ok($cmf->set("${p}cmf-$name", $v), "CMF sets $name");
    is_deeply($m->get("${p}cmf-$name"), $v, "... Mcpool reads it");
    ok($m->set("${p}mc-$name", $v), "Mcpool sets $name");
    is_deeply($cmf->get("${p}mc-$name"), $v, "... CMF reads it");
    is_deeply($cm->get("${p}mc-$name"), $v, "... Cache::Memcached reads it");
    ok($cm->set("${p}cm-$name", $v), "Cache::Memcached sets $name");
    is_deeply($m->get("${p}cm-$name"), $v, "... Mcpool reads it");
}
is_deeply($m->get_multi(map { "${p}cmf-$_" } sort keys %values),
    { map { ("${p}cmf-$_" => $values{$_}) } keys %values }, 'get_multi of every kind written by CMF');

# The flags on the wire are the same: compressed is flag 2 (gzip), Storable 1, UTF-8 4.
my $flags = sub {
    my $key = shift;
    my $s = IO::Socket::INET->new(PeerAddr => $srv) or die;
    print $s "get $key\r\n";
    my $line = <$s>;
    return ($line =~ /^VALUE \S+ (\d+) (\d+)/) ? [$1, $2] : undef;
};
use IO::Socket::INET;
is($flags->("${p}mc-compressed")->[0], 2, 'Mcpool writes compressed values with flag 2');
ok($flags->("${p}mc-compressed")->[1] < length($big) / 5, '... and they are smaller');
is($flags->("${p}mc-storable")->[0], 1, 'Storable: flag 1');
is($flags->("${p}mc-bigref")->[0], 3, 'Storable and compressed: flags 3');
is($flags->("${p}mc-compressed")->[0], $flags->("${p}cmf-compressed")->[0], 'same flags as CMF');
is($flags->("${p}mc-bigref")->[0], $flags->("${p}cmf-bigref")->[0], '... for a compressed reference too');

# UTF-8 (utf8 => 1): flag 4 both ways with CMF; Cache::Memcached sees the UTF-8 octets.
ok($cmf->set("${p}cmf-utf8", $chars), 'CMF sets a character string (utf8 => 1)');
is($m->get("${p}cmf-utf8"), $chars, '... Mcpool reads the characters');
ok($m->set("${p}mc-utf8", $chars), 'Mcpool sets a character string');
is($cmf->get("${p}mc-utf8"), $chars, '... CMF reads the characters');
is($flags->("${p}mc-utf8")->[0], 4, '... flag 4 on the wire');
is($flags->("${p}mc-utf8")->[0], $flags->("${p}cmf-utf8")->[0], '... as CMF writes it');
is($cm->get("${p}mc-utf8"), Encode::encode_utf8($chars), 'Cache::Memcached reads the UTF-8 octets');
my $octets = Encode::encode_utf8($chars);
ok($cm->set("${p}cm-utf8", $octets), 'Cache::Memcached sets UTF-8 octets');
is($m->get("${p}cm-utf8"), $octets, '... Mcpool reads the same octets (no flag 4: not decoded)');
my $m0 = Mcpool->new({ servers => [$srv] });
is($m0->get("${p}cmf-utf8"), $octets, 'without utf8, a flag-4 value reads as its octets (as CMF)');
is($raw->get("${p}mc-utf8"), $octets, '... CMF without utf8 agrees');

# Storable is thawed only when flagged: Storable bytes stored as a plain string stay a string.
my $frozen = Storable::nfreeze($ref);
ok($raw->set("${p}frozen-plain", $frozen), 'CMF stores Storable bytes as a plain string');
is($m->get("${p}frozen-plain"), $frozen, '... Mcpool returns the bytes, not thawed');

# A compressed value with a small threshold on the other side still inflates.
my $nocomp = Mcpool->new({ servers => [$srv] });
is($nocomp->get("${p}cmf-compressed"), $big, 'a client without compression still inflates flag-2 values');
is($raw->get("${p}mc-compressed"), $big, '... and so does CMF');

done_testing;
