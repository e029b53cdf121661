# value_format (the core's value formats) and serialize: Perl values as the core's kinds,
# the flags on the wire, and values that are errors (a warning, nothing returned), never bytes.
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use McpoolTest;
use Mcpool;
use IO::Socket::INET;
use Storable ();
use B ();
use Encode ();

my $srv = start_memcached();
my $p   = unique('vf');
my ($MARK, $TEXT, $INT, $STORABLE, $PICKLE) =
    (1 << 24, (1 << 24) | 1 << 16, (1 << 24) | 2 << 16, (1 << 24) | 5 << 16, (1 << 24) | 4 << 16);

sub raw {
    my ($cmd) = @_;
    my $s = IO::Socket::INET->new(PeerAddr => $srv, Timeout => 5) or die "connect: $!";
    binmode $s;
    print $s $cmd;
    my $buf = '';
    while ($buf !~ /(?:END|STORED|NOT_STORED|ERROR)\r\n\z/) {
        my $n = sysread $s, $buf, 1 << 20, length $buf;
        last unless $n;
    }
    return $buf;
}
sub raw_get {    # (flags, bytes) as stored
    my ($k) = @_;
    my $r = raw("get $k\r\n");
    return unless $r =~ /\AVALUE \S+ (\d+) (\d+)\r\n/;
    return ($1, substr($r, length($&), $2));
}
sub raw_set {
    my ($k, $flags, $data) = @_;
    raw(sprintf "set %s %d 0 %d\r\n%s\r\n", $k, $flags, length $data, $data);
}
sub warned(&) {
    my @w;
    local $SIG{__WARN__} = sub { push @w, $_[0] };
    my @r = $_[0]->();
    return (\@w, @r);
}

my $mc = Mcpool->new({ servers => [$srv], value_format => 'mcpool' });
my $chars = "na\x{ef}ve \x{263a}";

# mcpool's layout: integer, text, bytes, Storable; each read back as what it was
ok $mc->set("${p}i", -42), 'an integer';
ok $mc->set("${p}s", $chars), 'a character string';
ok $mc->set("${p}b", "by\x{ff}tes"), 'bytes';
ok $mc->set("${p}r", { a => [1, 2] }), 'a reference';
is_deeply [raw_get("${p}i")], [$INT, '-42'], 'an integer is the INT kind, decimal text';
is_deeply [raw_get("${p}s")], [$TEXT, Encode::encode_utf8($chars)], 'text is UTF-8 text';
is((raw_get("${p}b"))[0], 0, 'bytes: flags 0');
is((raw_get("${p}r"))[0], $STORABLE, 'a reference: a Storable image');
is $mc->get("${p}i"), -42, 'the integer back';
ok !(B::svref_2object(\ $mc->get("${p}i"))->FLAGS & B::SVf_POK()), 'as a number, not a string';
is $mc->get("${p}s"), $chars, 'the text back';
ok utf8::is_utf8($mc->get("${p}s")), 'as a character string';
is $mc->get("${p}b"), "by\x{ff}tes", 'the bytes back';
is_deeply $mc->get("${p}r"), { a => [1, 2] }, 'the reference thawed';
ok $mc->set("${p}ascii", do { my $t = 'plain'; utf8::upgrade($t); $t }), 'ASCII text';
ok utf8::is_utf8($mc->get("${p}ascii")), 'ASCII text reads back as text (stays text)';
is_deeply $mc->get_multi("${p}i", "${p}s", "${p}b"),
    { "${p}i" => -42, "${p}s" => $chars, "${p}b" => "by\x{ff}tes" }, 'get_multi: the same';
my @set = $mc->set_multi(["${p}m1", 7], ["${p}m2", $chars], ["${p}m3", "x"]);
is_deeply \@set, [1, 1, 1], 'set_multi of mixed kinds';
is((raw_get("${p}m1"))[0], $INT, 'set_multi: the integer kind');
is $mc->get("${p}m1"), 7, 'set_multi: read back';

# Cache::Memcached::Fast's layout (the default): a number is its decimal text, flags 0
my $cmf = Mcpool->new({ servers => [$srv] });
ok $cmf->set("${p}ci", 42), 'an integer under cache-memcached-fast';
is_deeply [raw_get("${p}ci")], [0, '42'], 'stored as its decimal text, flags 0 (as C::M::F)';
my @r = $cmf->set_multi(["${p}cm", 43]);
is_deeply [raw_get("${p}cm")], [0, '43'], 'set_multi too';

# values that are errors: a warning naming the key, nothing returned, never the bytes
for my $case (
    ['cache-memcached-fast', 8, 'x' x 10, 'pylibmc zlib bit under cache-memcached-fast'],
    ['cache-memcached-fast', 2, 'not gzip', 'a corrupt gzip stream'],
    ['mcpool', 16, 'abc', "pylibmc's text flag under mcpool"],
    ['mcpool', $PICKLE, "\x80\x04K\x01.", 'a Python pickle'],
    ['mcpool', $MARK | 1 << 20, 'not zlib', 'a corrupt zlib stream under mcpool'],
) {
    my ($fmt, $flags, $data, $what) = @$case;
    my $c = Mcpool->new({ servers => [$srv], value_format => $fmt });
    raw_set("${p}bad", $flags, $data);
    my ($w, $v) = warned { $c->get("${p}bad") };
    ok !defined $v, "$what: get returns nothing";
    like "@$w", qr/\Q${p}bad\E.*flags|MCPOOL_DECOMPRESS.*\Q${p}bad\E/, "$what: a warning names the key";
    ($w, $v) = warned { $c->get_multi("${p}bad", "${p}b") };
    ok !exists $v->{"${p}bad"}, "$what: get_multi leaves the key out";
    ok exists $v->{"${p}b"}, "$what: and returns the others";
    like "@$w", qr/not returned/, "$what: with a warning";
}

# Another language's serialized object with its core option on (serialized_python,
# serialized_java: the core then delivers it): Perl cannot read it, so it is the same error as
# with the option off (a warning naming the key and the flags, last_error set), never a miss.
my $JAVA = (1 << 24) | 6 << 16;
for my $case ([$PICKLE, "\x80\x04K\x01.", 'a Python pickle', 'serialized_python'],
              [$JAVA, "\xac\xed\x00\x05t\x00\x01x", 'a Java serialized object', 'serialized_java']) {
    my ($flags, $data, $what, $opt) = @$case;
    my $c = Mcpool->new({ servers => [$srv], value_format => 'mcpool', $opt => 1 });
    raw_set("${p}fo", $flags, $data);
    for my $call (
        [get        => sub { $c->get("${p}fo") }],
        [gets       => sub { $c->gets("${p}fo") }],
        [gat        => sub { $c->gat(0, "${p}fo") }],
        [get_multi  => sub { my $h = $c->get_multi("${p}fo"); exists $h->{"${p}fo"} ? 1 : () }],
        [get_multi2 => sub { my $h = $c->get_multi("${p}fo", "${p}b"); exists $h->{"${p}fo"} ? 1 : () }],
        [gets_multi => sub { my $h = $c->gets_multi("${p}fo", "${p}b"); exists $h->{"${p}fo"} ? 1 : () }],
    ) {
        my ($name, $run) = @$call;
        my ($w, $v) = warned { $run->() };
        ok !defined $v, "$opt: $what: $name returns nothing for it";
        like "@$w", qr/MCPOOL_VALUE_FORMAT.*\Q${p}fo\E.*flags \Q$flags\E.*\Q$what\E.*Perl cannot read it.*not returned/,
            "$opt: $what: $name warns naming the key and the flags";
        like Mcpool::last_error(), qr/\Q${p}fo\E.*\Q$what\E/, "$opt: $what: $name sets last_error";
    }
    my $cm = Mcpool->new({ servers => [$srv], value_format => 'mcpool', $opt => 1, protocol => 'meta' });
    my ($w, @l) = warned { $cm->get_lease("${p}fo", 0, 0) };
    ok !@l, "$opt: $what: get_lease returns nothing for it";
    like Mcpool::last_error(), qr/\Q$what\E/, "$opt: $what: get_lease sets last_error";
    $c->get("${p}absent");
    is Mcpool::last_error(), '', "$opt: a real miss leaves last_error empty";
}

# whalin: an integer (an IV) is Whalin's Long (MARKER_LONG 16384, 8 bytes big-endian)
# whatever its size, which Whalin's Java client reads as a java.lang.Long; an Integer, Short
# or Byte Whalin wrote reads as an IV.
my $wh = Mcpool->new({ servers => [$srv], value_format => 'whalin' });
for my $n (7, -2, 2147483648, -9223372036854775807 - 1) {
    ok $wh->set("${p}wl", $n), "whalin: set $n";
    is_deeply [raw_get("${p}wl")], [16384, pack('q>', $n)], "whalin: $n is a Long, 8 bytes";
    is $wh->get("${p}wl"), $n, "whalin: $n read back";
}
for my $case ([4, "\xff\xff\xff\xfe", -2, 'Integer'], [256, "\0\0\x01\0", 256, 'Short'], [1, "\x03", 3, 'Byte']) {
    my ($flags, $body, $n, $what) = @$case;
    raw_set("${p}wj", $flags, $body);
    is $wh->get("${p}wj"), $n, "whalin: Whalin's $what reads as an integer";
}

# pylibmc's long flag with a Python int beyond 64 bits: its exact digits, a string (never a
# wrapped or saturated IV); one that fits is an IV.
my $pl = Mcpool->new({ servers => [$srv], value_format => 'pylibmc' });
for my $d ('1208925819614629174706176', '-1180591620717411303424', '18446744073709551616',
           '-9223372036854775809') {
    raw_set("${p}pb", 4, $d);
    my $v = $pl->get("${p}pb");
    ok !(B::svref_2object(\$v)->FLAGS & B::SVf_IOK()), "pylibmc: $d is a string, not an IV";
    is $v, $d, "pylibmc: $d read exact";
}
raw_set("${p}pb", 4, '-9223372036854775808');
my $min = $pl->get("${p}pb");
ok B::svref_2object(\$min)->FLAGS & B::SVf_IOK(), 'pylibmc: -2**63 is an IV';

# 2**63..2**64-1 (memcached's counters go that far) are numbers Perl holds as UVs: read back
# as a number (IOK, IsUV), so storing what was read keeps the int kind (before, the digits
# came back as a string and a set of it stored bytes, flags 0, which Python, Java and C then
# read as bytes); beyond 64 bits the exact digits, a string
sub is_number { my $f = B::svref_2object(\$_[0])->FLAGS; ($f & B::SVf_IOK()) && !($f & B::SVf_POK()) }
for my $n (9223372036854775807, 9223372036854775808, 18446744073709551615) {
    ok $mc->set("${p}uv", $n), "set $n";
    is_deeply [raw_get("${p}uv")], [$INT, "$n"], "$n is the INT kind";
    my $v = $mc->get("${p}uv");
    ok is_number($v), "$n reads back as a number, not a string";
    is $v, $n, "$n read exact";
    ok $mc->set("${p}uv", $v), "$n: stored back";
    is_deeply [raw_get("${p}uv")], [$INT, "$n"], "$n: stored back, still the INT kind";
    raw_set("${p}uvp", 4, "$n");
    my $pv = $pl->get("${p}uvp");
    ok is_number($pv), "pylibmc: $n is a number";
    is $pv, $n, "pylibmc: $n read exact";
}
ok B::svref_2object(\ $mc->get("${p}uv"))->FLAGS & B::SVf_IVisUV(), '2**64-1 is a UV';
# a counter past 2**63
ok $mc->set("${p}ctr", 9223372036854775807), 'a counter at 2**63-1';
is $mc->incr("${p}ctr", 5), '9223372036854775812', 'incr past 2**63';
my $ctr = $mc->get("${p}ctr");
ok is_number($ctr) && $ctr == 9223372036854775812, 'the counter past 2**63 reads back as a number';
for my $d ('18446744073709551616', '99999999999999999999999') {
    raw_set("${p}uvb", $INT, $d);
    my $v = $mc->get("${p}uvb");
    ok !(B::svref_2object(\$v)->FLAGS & B::SVf_IOK()), "$d (beyond 64 bits) is a string";
    is $v, $d, "$d read exact";
}

# serialize => 0: no Storable images either way
my $noser = Mcpool->new({ servers => [$srv], value_format => 'mcpool', serialize => 0 });
eval { $noser->set("${p}nr", [1]) };
like $@, qr/serialize is off/, 'serialize => 0: storing a reference croaks';
my ($w, $v) = warned { $noser->get("${p}r") };
ok !defined $v, 'serialize => 0: a Storable image is not returned';
like "@$w", qr/\Q${p}r\E/, 'with a warning naming the key';

# utf8 defaults on under mcpool's format however its name is written (tester finding values 1:
# 'MCPOOL' stored an upgraded "caf\x{e9}" as Latin-1 bytes under flags 0, and croaked on a
# wide character, where 'mcpool' stored UTF-8 text); utf8 => 0 given stays off.
for my $name ('mcpool', 'MCPOOL', 'Mcpool', ' mcpool ') {
    my $m = Mcpool->new({ servers => [$srv], value_format => $name });
    my $s = "caf\x{e9}";
    utf8::upgrade($s);
    ok $m->set("${p}case", $s), "value_format '$name': an upgraded string";
    is_deeply [raw_get("${p}case")], [$TEXT, "caf\xc3\xa9"], '... is UTF-8 text';
    ok $m->set("${p}wide", "\x{2603}"), '... a wide character is stored';
    ok utf8::is_utf8($m->get("${p}case")), '... read back as a character string';
}
{
    my $m = Mcpool->new({ servers => [$srv], value_format => 'MCPOOL', utf8 => 0 });
    ok !eval { $m->set("${p}wide", "\x{2603}"); 1 }, 'utf8 => 0 given: a wide character croaks';
}

eval { Mcpool->new({ servers => [$srv], value_format => 'nope' }) };
like $@, qr/value_format/, 'an unknown value_format croaks naming the option';

# $memd->value_format: the name of the format the client was built with, as the core has it in
# force, whichever option set it (Python's Client.value_format; tester finding perl2 7).
{
    my @cases = (
        [ {}                                            => 'cache-memcached-fast', 'the default' ],
        [ { value_format => 'mcpool' }                  => 'mcpool',               'value_format mcpool' ],
        [ { value_format => ' MCPOOL ' }                => 'mcpool',               'another spelling' ],
        [ { value_format => 'whalin' }                  => 'whalin',               'value_format whalin' ],
        [ { preset => 'pylibmc' }                       => 'pylibmc',              'a preset' ],
        [ { preset => 'pylibmc', value_format => 'mcpool' } => 'mcpool',           'value_format over a preset' ],
    );
    for my $c (@cases) {
        my ($opts, $want, $what) = @$c;
        my $m = Mcpool->new({ servers => [$srv], %$opts });
        is $m->value_format, $want, "value_format: $what";
    }
    my $lmc = Mcpool->new({ libmemcached_config => "--SERVER=$srv" });
    is $lmc->value_format, 'libmemcached', 'value_format: libmemcached_config';

    # it cannot fail: last_error is left as it is; the same on the callbacks' wrapper, after a
    # namespace change (the client rebuilt), and after close
    my $h = Mcpool->new({ servers => [$srv], value_format => 'spymemcached', on_operation => sub { } });
    $h->set('a b', 1);
    my $le = Mcpool::last_error();
    like $le, qr/invalid key/, 'a failed call';
    is $h->value_format, 'spymemcached', 'value_format with on_operation';
    is Mcpool::last_error(), $le, '... last_error left as it was';
    $h->namespace('ns:');
    is $h->value_format, 'spymemcached', '... after a namespace change';
    $h->close;
    is $h->value_format, 'spymemcached', '... after close';
    my $none = Mcpool->new;
    is $none->value_format, undef, 'a client without servers: undef';
    my $ro = Mcpool->new({ servers => [$srv], readonly => 1, value_format => 'mcpool' });
    is $ro->value_format, 'mcpool', 'a read-only client';
    my $pm = do { local (@ARGV, $/) = $INC{'Mcpool.pm'}; <> };
    like $pm, qr/^=item value_format \(\)\n\nmcpool extension \(Python's C<Client.value_format>\)/m,
        'value_format is documented among the methods';
}

done_testing;
