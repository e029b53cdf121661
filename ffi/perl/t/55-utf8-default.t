# utf8 not given follows the value format in force (tester finding crosslang 3): on where the
# format has a text kind and is not a Perl client's (mcpool, pylibmc, python-memcached,
# pymemcache, whalin), so a decoded string is the format's text and a Python str or Java
# String reads back as characters; off under cache-memcached-fast and cache-memcached
# (Cache::Memcached::Fast's default, unchanged) and the formats without a text kind
# (spymemcached, libmemcached). utf8 => 0 / 1 given always wins.
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use McpoolTest;
use Mcpool;
use Encode ();

my $srv = start_memcached();
my $p   = unique('utf8-default');

my $decoded = Encode::decode_utf8("h\xc3\xa9llo");    # "h\x{e9}llo", the UTF8 flag on
my $wide    = "snow \x{2603} \x{1F600}";
ok(utf8::is_utf8($decoded), 'the decoded string is a character string');

# The formats whose text is another language's: on by default
for my $case ([ { value_format => 'pylibmc' }, 16, 'pylibmc' ],
              [ { value_format => ' PyLibMC ' }, 16, 'pylibmc in another spelling' ],
              [ { preset => 'pylibmc' }, 16, 'the pylibmc preset' ],
              [ { value_format => 'python-memcached' }, 16, 'python-memcached' ],
              [ { value_format => 'pymemcache' }, 16, 'pymemcache' ],
              [ { value_format => 'whalin' }, 32, 'whalin' ],
              [ { value_format => 'mcpool' }, 0x01010000, 'mcpool (as before)' ]) {
    my ($opt, $text, $name) = @$case;
    my $m = Mcpool->new({ servers => [$srv], namespace => unique('on'), %$opt });
    for my $v ([ decoded => $decoded ], [ wide => $wide ]) {
        my ($what, $s) = @$v;
        ok($m->set("on-$what", $s), "$name: set of a $what string");
        my $got = $m->get("on-$what");
        is($got, $s, '... read back as the same characters');
        ok(utf8::is_utf8($got), '... a character string');
        is_deeply([ $m->get_bytes("on-$what") ], [ Encode::encode_utf8($s), $text, 0 ],
            "... stored as the format's text kind (flags $text), UTF-8");
    }
    ok(($m->set_multi([ "on-m", $decoded ]))[0], "$name: set_multi of a decoded string");
    is(($m->get_bytes("on-m"))[1], $text, '... stores text too');
}

# What a Python client stored as a str (pylibmc's text flag 16, UTF-8): a character string,
# so a read-modify-write keeps it text (it was bytes, stored back as bytes under flags 0)
{
    my $m = Mcpool->new({ servers => [$srv], namespace => $p, value_format => 'pylibmc' });
    raw_set($srv, "${p}py-str", 16, "caf\xc3\xa9");
    my $v = $m->get('py-str');
    is($v, "caf\x{e9}", "pylibmc: a Python str reads as characters");
    ok(utf8::is_utf8($v), '... a character string');
    ok($m->set('py-str', $v . '!'), '... stored back');
    is_deeply(raw_get_multi($srv, "${p}py-str")->{"${p}py-str"}, [ 16, "caf\xc3\xa9!" ],
        '... still text for Python');
    ok($m->set('py-bytes', "by\xfftes"), 'a byte string ...');
    is_deeply(raw_get_multi($srv, "${p}py-bytes")->{"${p}py-bytes"}, [ 0, "by\xfftes" ],
        '... stays bytes (flags 0)');
}

# Off: the Perl clients' formats (Cache::Memcached::Fast's default, unchanged) and the formats
# without a text kind: a wide character croaks, a decoded Latin-1 string is its bytes
for my $case ([ {}, 'the default (cache-memcached-fast)' ],
              [ { value_format => 'cache-memcached-fast' }, 'cache-memcached-fast' ],
              [ { value_format => 'CMF' }, 'cache-memcached-fast as cmf' ],
              [ { value_format => 'spymemcached' }, 'spymemcached (text is flags 0)' ],
              [ { value_format => 'libmemcached' }, 'libmemcached (no text kind)' ],
              [ { value_format => 'pylibmc', utf8 => 0 }, 'pylibmc with utf8 => 0 given' ],
              [ { value_format => 'mcpool', utf8 => 0 }, 'mcpool with utf8 => 0 given' ]) {
    my ($opt, $name) = @$case;
    my $m = Mcpool->new({ servers => [$srv], namespace => $p, %$opt });
    ok(!eval { $m->set("off-wide", $wide); 1 }, "$name: a wide character croaks");
    like($@, qr/Wide character/, '... "Wide character", as Cache::Memcached::Fast');
    ok($m->set("off-decoded", $decoded), "$name: a decoded Latin-1 string ...");
    my ($bytes) = $m->get_bytes('off-decoded');
    is($bytes, "h\xe9llo", '... is stored as its Latin-1 bytes');
    ok(!utf8::is_utf8($m->get('off-decoded')), '... and read back as bytes');
}
{   # off under pylibmc with utf8 => 0: Python's text reads as its UTF-8 bytes, as before
    my $m = Mcpool->new({ servers => [$srv], namespace => $p, value_format => 'pylibmc', utf8 => 0 });
    raw_set($srv, "${p}py-str0", 16, "caf\xc3\xa9");
    my $v = $m->get('py-str0');
    is($v, "caf\xc3\xa9", 'pylibmc, utf8 => 0: a Python str reads as its UTF-8 bytes');
    ok(!utf8::is_utf8($v), '... not decoded');
}

# Off under Cache::Memcached's format: a character string as Perl holds it, as Cache::Memcached
# writes it (tester finding migration 1): a wide one as its UTF-8, a decoded Latin-1 one
# (upgraded) as its UTF-8 too; t/65-cache-memcached-strings.t compares with Cache::Memcached
for my $case ([ { value_format => 'cache-memcached' }, 'cache-memcached' ],
              [ { preset => 'cache-memcached' }, 'the cache-memcached preset' ]) {
    my ($opt, $name) = @$case;
    my $m = Mcpool->new({ servers => [$srv], namespace => $p, %$opt });
    ok($m->set("cm-wide", $wide), "$name: a wide character is stored");
    is(($m->get_bytes('cm-wide'))[0], Encode::encode_utf8($wide), '... as its UTF-8 bytes');
    ok(!utf8::is_utf8($m->get('cm-wide')), '... and read back as bytes');
}

# utf8 => 1 given under the Perl clients' format: on, flag 4 (as Cache::Memcached::Fast's)
{
    my $m = Mcpool->new({ servers => [$srv], namespace => $p, utf8 => 1 });
    ok($m->set('cmf-wide', $wide), 'cache-memcached-fast with utf8 => 1: a wide character is stored');
    is_deeply([ $m->get_bytes('cmf-wide') ], [ Encode::encode_utf8($wide), 4, 0 ], '... as flag 4 text');
    is($m->get('cmf-wide'), $wide, '... read back as characters');
}

# The POD says so
{
    open my $fh, '<', "$FindBin::Bin/../lib/Mcpool.pm" or die "Mcpool.pm: $!";
    my $pod = do { local $/; <$fh> };
    my ($item) = $pod =~ /^=item utf8\n\n(.*?)^=item /ms;
    like($item // '', qr/C<pylibmc>, C<python-memcached>, C<pymemcache>, C<whalin>/, 'utf8: the formats it is on under');
    like($item // '', qr/C<cache-memcached-fast> \(the default\) and C<cache-memcached>/, '... and off under');
}

done_testing;
