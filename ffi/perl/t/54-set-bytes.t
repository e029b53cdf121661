# set_bytes($key, $value, $flags[, $exptime]): bytes under the caller's flags, get_bytes'
# counterpart (the C ABI's mcpool_client_set, Java's setBytes; tester finding crosslang 2).
# What get_bytes hands out, stored back, is the same value and flags; the flags are checked
# (an integer 0..2**32-1) and the core refuses flags the format cannot read back.
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use McpoolTest;
use Mcpool;
use Encode ();

my $srv = start_memcached();
my $p   = unique('set-bytes');

sub raw { my $k = shift; return raw_get_multi($srv, $k)->{$k} }    # [flags, bytes] or undef

my $big = join '', map { "line $_ of a compressible value\n" } 1 .. 200;
my $chars = Encode::decode_utf8("h\xc3\xa9llo \xe2\x98\x83");    # decoded: "h\x{e9}llo \x{2603}"

# Per format: values stored with set (each of the format's kinds), then copied with
# get_bytes -> set_bytes: the copy has the same flags and body on the wire, get_bytes and
# get give the same back. cache-memcached-fast is Perl's default, mcpool the core's; pylibmc
# and whalin are legacy formats (whalin's integer is binary on the wire: the core converts).
my @formats = (
    [ 'cache-memcached-fast' => { utf8 => 1 },
        [ bytes => "by\xfftes", 0 ], [ text => $chars, 4 ], [ number => 42, 0 ],
        [ ref => { a => [1, 2] }, 1 ], [ big => $big, 0 ], [ empty => '', 0 ] ],
    [ mcpool => {},
        [ bytes => "by\xfftes", 0 ], [ text => $chars, 0x01010000 ], [ int => -42, 0x01020000 ],
        [ ref => { a => [1, 2] }, 0x01050000 ], [ big => $big, 0 ], [ empty => '', 0 ] ],
    [ pylibmc => {},
        [ bytes => "by\xfftes", 0 ], [ text => $chars, 16 ], [ int => 1 << 40, 4 ], [ big => $big, 0 ] ],
    [ whalin => {},
        [ bytes => "by\xfftes", 4096 ], [ text => $chars, 32 ], [ int => -7, 16384 ], [ big => $big, 4096 ] ],
);
for my $f (@formats) {
    my ($fmt, $opt, @values) = @$f;
    my $m = Mcpool->new({ servers => [$srv], value_format => $fmt, namespace => "$p$fmt:",
        compress_threshold => 1000, %$opt });
    for my $v (@values) {
        my ($what, $value, $kind_flags) = @$v;
        my $name = "$fmt, $what";
        ok($m->set("o-$what", $value), "$name: set");
        my ($bytes, $flags, $as_stored) = $m->get_bytes("o-$what");
        ok(defined $bytes, "$name: get_bytes") or next;
        is($as_stored, 0, "$name: a value the format reads");
        is($flags, $kind_flags, "$name: under the format's flags for it ($kind_flags)");
        is($m->set_bytes("c-$what", $bytes, $flags), 1, "$name: set_bytes of what get_bytes gave")
            or diag($m->last_error);
        is_deeply([ $m->get_bytes("c-$what") ], [ $bytes, $flags, 0 ],
            "$name: get_bytes of the copy: the same bytes and flags");
        is_deeply(raw("$p$fmt:c-$what"), raw("$p$fmt:o-$what"),
            "$name: on the wire the same flags and body (the namespace before the key)");
        is_deeply($m->get("c-$what"), $m->get("o-$what"), "$name: get of the copy: the same value");
        isnt(raw("$p$fmt:c-$what")->[0], $flags, "$name: compressed by the core, as set compresses it")
            if $what eq 'big';
    }
}

# mcpool's application flags (16 bits) come back as given; on the wire the layout's mark
{
    my $m = Mcpool->new({ servers => [$srv], value_format => 'mcpool', namespace => $p });
    is($m->set_bytes('app', 'abc', 7), 1, 'mcpool: application flags 7');
    is_deeply([ $m->get_bytes('app') ], [ 'abc', 7, 0 ], '... read back as 7');
    is_deeply(raw("${p}app"), [ 0x01000007, 'abc' ], '... 0x01000007 on the wire');
    is($m->set_bytes('app', 'abc', 65535), 1, 'the largest application flags');
    is(($m->get_bytes('app'))[1], 65535, '... read back');
}

# The flags, strictly: an integer 0..2**32-1 by its value; anything else croaks naming flags,
# nothing stored (libmemcached takes every 32 bits, so only the binding's check refuses)
{
    my $m = Mcpool->new({ servers => [$srv], value_format => 'libmemcached', namespace => $p });
    for my $ok ([ '7' => 7 ], [ 2**10 => 1024 ], [ 4.0 => 4 ], [ 4294967295 => 4294967295 ],
                [ '007' => 7 ], [ 0 => 0 ]) {
        my ($given, $want) = @$ok;
        is($m->set_bytes('fl', 'v', $given), 1, "flags $given taken");
        is(($m->get_bytes('fl'))[1], $want, "... stored as $want");
    }
    my $tied = 5;
    for my $bad ([ undef, 'undef' ], [ -1, '-1' ], [ 1.5, '1.5' ], [ 4294967296, '4294967296' ],
                 [ 2**64, '1.84467440737096e\+19' ], [ 'abc', 'abc' ], [ '4abc', '4abc' ],
                 [ '1e3', '1e3' ], [ ' 7', ' 7' ], [ '', '' ], [ [], 'ARRAY' ], [ '-0', '-0' ],
                 [ 9**9**9, 'Inf' ], [ -9**9**9, '-Inf' ]) {
        my ($given, $shown) = @$bad;
        my $label = defined $given ? "'$given'" : 'undef';
        ok(!eval { $m->set_bytes('nf', 'v', $given); 1 }, "flags $label croak");
        like($@, qr/^set_bytes "nf": flags must be an integer from 0 to 4294967295 \(2\*\*32-1\), not '?$shown/,
            "... naming the call, the key, flags and what was given");
        ok(!raw("${p}nf"), '... nothing stored');
    }
}

# The value: bytes, never serialized nor encoded
{
    my $m = Mcpool->new({ servers => [$srv], value_format => 'mcpool', namespace => $p });
    my $latin = "caf\x{e9}";
    utf8::upgrade($latin);
    is($m->set_bytes('latin', $latin, 0), 1, 'a character string of Latin-1 characters (utf8 on)');
    is_deeply(raw("${p}latin"), [ 0, "caf\xe9" ], '... stored as its characters, not UTF-8-encoded');
    ok(!eval { $m->set_bytes('wide', "snow \x{2603}", 0); 1 }, 'a wide character croaks');
    like($@, qr/^Mcpool::set_bytes: Wide character in the value of "wide": set_bytes stores bytes/,
        '... saying why');
    ok(!raw("${p}wide"), '... nothing stored');
    ok(!eval { $m->set_bytes('undef', undef, 0); 1 }, 'an undef value croaks');
    like($@, qr/^Mcpool::set_bytes: the value of "undef" is undef/, '... saying so');
    ok(!eval { $m->set_bytes('ref', { a => 1 }, 0); 1 }, 'a reference croaks');
    like($@, qr/^Mcpool::set_bytes: the value of "ref" must be bytes \(a string\), not a reference \(HASH\)/,
        '... never serialized');
    ok(!raw("${p}undef") && !raw("${p}ref"), '... nothing stored');
    is($m->set_bytes('num', 0.1 + 0.2, 0), 1, 'a float');
    is(raw("${p}num")->[1], '0.30000000000000004', '... as the text that reads back as it (as set)');
    ok(!eval { $m->set_bytes('k', 'v'); 1 }, 'without flags: croaks');
    like($@, qr/^Usage: \$memd->set_bytes\(\$key, \$value, \$flags\[, \$expiration_time\]\)/, '... usage');
    ok(!eval { $m->set_bytes('k', 'v', 0, 0, 'x'); 1 }, 'an argument too many croaks');
    ok(!eval { $m->set_bytes(undef, 'v', 0); 1 }, 'an undef key croaks');
    like($@, qr/^Mcpool::set_bytes: the key is undef/, '... naming set_bytes');
    ok(!defined $m->set_bytes('with space', 'v', 0), 'a key with a space: nothing');
    like($m->last_error, qr/invalid key/, '... last_error says why');
}

# Flags the format cannot read back: the core's MCPOOL_VALUE_FORMAT refusal, as set answers
# an error (nothing, last_error), nothing stored: the older value stays
for my $case (
    [ mcpool  => 0x10000, 'abc', qr/application flags are 16 bits/ ],
    [ mcpool  => 0xFFFFFFFF, 'abc', qr/compression bits/ ],
    [ pylibmc => 1024, 'abc', qr/mean nothing in the pylibmc value format/ ],
    [ pylibmc => 8, 'abc', qr/compression bit, which mcpool sets itself/ ],
    [ pylibmc => 4, 'abc', qr/not a decimal integer/ ],
    [ pylibmc => 16, "\xff\xfe", qr/not UTF-8/ ],
    [ 'cache-memcached-fast' => 16, 'abc', qr/mean nothing in the cache-memcached-fast value format/ ],
    [ whalin  => 16384, '12x', qr/decimal text/ ],
) {
    my ($fmt, $flags, $body, $why) = @$case;
    my $m = Mcpool->new({ servers => [$srv], value_format => $fmt, namespace => "$p$fmt:" });
    ok($m->set('refused', 'old'), "$fmt: a key ...");
    my @r = $m->set_bytes('refused', $body, $flags);
    is(scalar @r, 0, "$fmt, flags $flags: nothing returned");
    ok(!defined scalar $m->set_bytes('refused', $body, $flags), '... undef in scalar context');
    like($m->last_error, qr/^set "refused": value format: storing key "refused" with flags $flags .*$why/,
        '... last_error: the core\'s refusal');
    is($m->get('refused'), 'old', '... nothing stored: the older value stays');
}
{   # a value get_bytes hands out as memcached holds it: flags the format cannot read back
    my $m = Mcpool->new({ servers => [$srv], namespace => $p });
    raw_set($srv, "${p}date", 1 << 10, "\x01\x02");    # spymemcached's Date
    my ($bytes, $flags, $as_stored) = $m->get_bytes('date');
    is($as_stored, 1, 'get_bytes: a value as stored');
    ok(!defined $m->set_bytes('date-copy', $bytes, $flags), '... set_bytes refuses its flags');
    like($m->last_error, qr/with flags 1024 .*mean nothing/, '... saying why');
    ok(!raw("${p}date-copy"), '... nothing stored');
}

# The expiration time, as set's: a negative one expires the item at once; a refused one
# returns nothing (last_error naming it), nothing stored
{
    my $m = Mcpool->new({ servers => [$srv], namespace => $p, protocol => 'meta' });
    is($m->set_bytes('t', 'old', 0), 1, 'a key ...');
    is($m->set_bytes('t', 'new', 0, -1), 1, '... set_bytes with -1: stored, as set');
    ok(!defined $m->get('t'), '... and expired at once');
    is($m->set_bytes('t', 'v', 0, 100), 1, 'set_bytes with 100 s');
    my $left = $m->meta_info('t')->{ttl};
    ok(defined $left && $left > 90 && $left <= 100, "... expires in 100 s ($left)");
    is($m->set_bytes('t', 'v', 0, undef), 1, 'undef: never expires');
    ok(!defined $m->meta_info('t')->{ttl} || $m->meta_info('t')->{ttl} < 0, '... no expiry');
    is($m->set_bytes('t', 'v', 0, 0.4), 1, '0.4 s ...');
    $left = $m->meta_info('t')->{ttl};
    ok(defined $left && $left >= 0 && $left <= 1, '... rounds up to 1 s, never 0');
    # a refused time: nothing stored, and the key deleted, as set (the core's rule for a set
    # refused for its time: no older value left to read, tester finding ttl 1)
    for my $bad ([ '5m', qr/^set "t2": invalid expiration time: "5m" is not a number of seconds/ ],
                 [ 2**32, qr/^set "t2": invalid ttl: 4294967296 is above 2147483647/ ]) {
        my ($t, $why) = @$bad;
        ok($m->set('t2', 'old'), 'a key ...');
        is(scalar(() = $m->set_bytes('t2', 'new', 0, $t)), 0, "time '$t': nothing returned");
        like($m->last_error, $why, '... last_error naming it as given');
        like($m->last_error, qr/; nothing was stored and the key was deleted/, '... and saying the key was deleted');
        ok(!defined $m->get('t2'), '... nothing stored, and no older value left');
    }
}

# The other kinds of client: read-only refuses (0, as set), no servers fails (nothing), with
# on_operation it is the same call
{
    my $ro = Mcpool->new({ servers => [$srv], namespace => $p, readonly => 1 });
    is($ro->set_bytes('ro', 'v', 0), 0, 'readonly: 0, as set');
    like($ro->last_error, qr/^set_bytes "ro": this client is read-only/, '... saying why');
    ok(!raw("${p}ro"), '... nothing sent');
    my $none = Mcpool->new({ servers => [] });
    ok(!defined $none->set_bytes('k', 'v', 0), 'no servers: nothing');
    like($none->last_error, qr/^set_bytes: no servers/, '... saying why');
    my @ops;
    my $h = Mcpool->new({ servers => [$srv], namespace => $p, on_operation => sub { push @ops, $_[0]{op} } });
    is($h->set_bytes('hooked', 'v', 4), 1, 'with on_operation: stored');
    is_deeply([ $h->get_bytes('hooked') ], [ 'v', 4, 0 ], '... under its flags');
    ok(scalar(grep { $_ eq 'set' } @ops), '... the callback saw the set');
}

done_testing;
