# A Storable image with bytes after it: memcached appends raw bytes and keeps the item's
# flags, and Storable::thaw stops at the end of the image, so an append (or a prepend of a
# whole image) read back as the thawed image would be the value without the added bytes.
# It is an error, as for a compressed value (docs/value-format.md, Reading 2): nothing
# returned, a warning naming the key (MCPOOL_VALUE_FORMAT), last_error saying why; the
# other values of the call are returned. Cache::Memcached::Fast, side by side, returns the
# old value. Before, every read returned [1, 2].
#
# The end of an image is found by walking Storable's format (Mcpool::_storable_len), checked
# here against every kind of image Storable writes, in network and native order: a valid
# image must measure exactly its length (never an error for a value thaw reads whole).
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use McpoolTest;
use Mcpool;
use Storable ();
use Scalar::Util ();
use Hash::Util ();
use Tie::Hash;
use Tie::Array;
use Tie::Scalar;

package Hooked; # STORABLE_freeze with references of its own (SX_HOOK: recursion, a list)
sub new { my ($c, %a) = @_; bless {%a}, $c }
sub STORABLE_freeze { my ($s) = @_; ("frozen:" . ($s->{n} // 0), @{ $s->{refs} || [] }) }
sub STORABLE_thaw { my ($s, $cloning, $str, @refs) = @_; $s->{str} = $str; $s->{refs} = \@refs }
package Attached; # STORABLE_attach
sub new { bless { v => $_[1] }, $_[0] }
sub STORABLE_freeze { "v=" . $_[0]{v} }
sub STORABLE_attach { my ($c, $cl, $str) = @_; $str =~ /v=(.*)/; $c->new($1) }
package Over; use overload '""' => sub { "over" }, fallback => 1;
sub new { bless [1], shift }
package TiedH; our @ISA = ('Tie::StdHash');
package TiedA; our @ISA = ('Tie::StdArray');
package TiedS; our @ISA = ('Tie::StdScalar');
package HookedTied; our @ISA = ('Tie::StdHash'); # a hook on a blessed tied hash (SHT_EXTRA)
sub STORABLE_freeze { "ht" }
sub STORABLE_thaw { }
package main;

sub corpus {
    my @c = ([1, 2], {}, [], \"s", \undef, \1, \-1, \2**40, \-2**40, \1.5, \("x" x 300),
             ["\x{263a}" x 200], { "\x{263a}" => 1, "k\x{e9}" => 2, plain => 3 },
             { map { ("k$_" => [$_, "v" x $_]) } 1 .. 300 }, [map { $_ % 3 ? $_ : undef } 1 .. 1000]);
    my @holes; $holes[5] = 1; push @c, \@holes;
    my $shared = [1]; push @c, [$shared, $shared, { a => $shared }];
    my $cyc = {}; $cyc->{self} = $cyc; push @c, $cyc;
    push @c, [bless({ a => 1 }, 'Some::Class'), bless([2], 'Some::Class'), bless(\(my $x = 3), 'Other')];
    push @c, bless({}, 'A' x 200);                  # a class name longer than 127 bytes
    push @c, [map { bless {}, "Cls$_" } 1 .. 300];  # class indexes above 127
    my ($r1, $r2) = ([1], { b => 2 });
    push @c, Hooked->new(n => 1), Hooked->new(n => 2, refs => [$r1, $r2]),
             [Hooked->new(n => 3, refs => [$r1]), $r1, Hooked->new(n => 4, refs => [$r1, $r2])],
             Hooked->new(n => 5, refs => [map { [$_] } 1 .. 300]), [Hooked->new(n => 6), Hooked->new(n => 7)],
             Attached->new(42), [Over->new, Over->new];
    { my %h; tie %h, 'TiedH'; %h = (a => 1); push @c, \%h, [\$h{a}]; }
    { my @a; tie @a, 'TiedA'; @a = (1, 2); push @c, \@a, [\$a[1]]; }
    { my $s; tie $s, 'TiedS'; $s = 5; push @c, \$s; }
    { my %h; tie %h, 'HookedTied'; push @c, bless(\%h, 'HookedTied'); }
    { my %h = (a => 1, b => 2, zz => 3); Hash::Util::lock_keys(%h); delete $h{zz};
      Hash::Util::lock_value(%h, 'a'); push @c, \%h; }        # restricted: flags, a placeholder
    { my $t = [1]; my $w = { strong => $t, weak => $t }; Scalar::Util::weaken($w->{weak}); push @c, $w; }
    { my $o = Over->new; my $w = [$o, $o]; Scalar::Util::weaken($w->[1]); push @c, $w; }
    push @c, [v1.2.3, \v5.36.0], [qr/ab+c/i, qr/x{3,}/msx, qr/\x{263a}/], [qr/${\ ('a' x 300)}/],
             [1e300, -0.0, 3.14159, 9**9**9], [1 .. 70000], ["x" x 70000];
    my $deep = []; my $d = $deep; for (1 .. 20000) { $d->[0] = []; $d = $d->[0] } push @c, $deep;
    return @c;
}

{   # the walker against Storable's own images
    local $Storable::recursion_limit = -1;
    no warnings "once";
    local $Storable::Deparse = 1;
    my @c = (corpus(), [sub { 1 + shift }], [sub { "\x{263a}" x 200 }]);
    my ($exact, $prefixes_short) = (0, 1);
    for my $i (0 .. $#c) {
        for my $f (['nfreeze', \&Storable::nfreeze], ['freeze', \&Storable::freeze]) {
            my $img = $f->[1]->($c[$i]);
            my $len = Mcpool::_storable_len($img);
            my $junk = Mcpool::_storable_len($img . "JUNK");
            $exact++ if defined $len && $len == length $img && defined $junk && $junk == length $img;
            diag("$f->[0] of #$i: " . length($img) . " bytes, measured " . ($len // 'undef'))
                unless defined $len && $len == length $img;
            next if length $img > 4000;
            for my $k (0 .. length($img) - 1) {   # a strict prefix is never a whole image
                $prefixes_short = 0 if defined Mcpool::_storable_len(substr $img, 0, $k);
            }
        }
    }
    is $exact, 2 * @c, 'every image Storable writes measures exactly its length, with or without bytes after it';
    ok $prefixes_short, 'no strict prefix of an image measures as a whole image';
    ok !defined Mcpool::_storable_len($_), 'not an image: cannot tell'
        for '', "\x05", "JUNK", "\x04\x0b", "\x05\x0b\x21" . ("\0" x 20);
}

my $srv = start_memcached();
my $p   = unique('st');
sub warned(&) {
    my @w;
    local $SIG{__WARN__} = sub { push @w, $_[0] };
    my @r = $_[0]->();
    return (\@w, @r);
}
my $cmf = Cache::Memcached::Fast->new({ servers => [$srv] }) if eval { require Cache::Memcached::Fast; 1 };
ok $cmf, 'Cache::Memcached::Fast is installed (ffi/perl/packages.txt)';

for my $fmt ('cache-memcached-fast', 'mcpool') {
    my $mc = Mcpool->new({ servers => [$srv], value_format => $fmt });
    my $meta = Mcpool->new({ servers => [$srv], value_format => $fmt, protocol => 'meta' });
    my ($k, $other) = ("${p}$fmt", "${p}$fmt-untouched");
    ok $mc->set($_, [1, 2]), "$fmt: set $_" for $k, $other;
    ok $mc->append($k, 'JUNK'), "$fmt: append to a Storable image";
    my $why = qr/\Q$k\E.*Storable image with 4 bytes after the serialized object/;
    for my $read (['get', sub { $mc->get($k) }], ['gets', sub { $mc->gets($k) }],
                  ['gat', sub { $mc->gat(100, $k) }]) {
        my ($w, @r) = warned { $read->[1]->() };
        ok !@r, "$fmt: $read->[0] returns nothing";
        like "@$w", qr/Mcpool::$read->[0]: MCPOOL_VALUE_FORMAT: .*$why.*not returned/, "$fmt: $read->[0] warns naming the key";
        like Mcpool::last_error(), $why, "$fmt: $read->[0]: last_error says why";
    }
    for my $fn ('get_multi', 'gets_multi') {
        my ($w, $h) = warned { $mc->$fn($k, $other) };
        is_deeply [sort keys %$h], [$other], "$fmt: $fn leaves the key out, returns the others";
        like "@$w", $why, "$fmt: $fn warns naming the key";
        ($w, $h) = warned { $mc->$fn($k) };
        is_deeply $h, {}, "$fmt: $fn of that key alone";
        like "@$w", $why, "$fmt: $fn of one key warns";
    }
    my ($w, @l) = warned { $meta->get_lease($k, 0, 0) };
    ok !@l, "$fmt: get_lease returns nothing";
    like Mcpool::last_error(), $why, "$fmt: get_lease: last_error says why";
    is_deeply $mc->get($other), [1, 2], "$fmt: an image left alone reads";
    is_deeply $mc->get_multi($other), { $other => [1, 2] }, "$fmt: ... also in get_multi";
    # a whole image prepended would thaw as that image
    ok $mc->set($k, [1, 2]) && $mc->prepend($k, Storable::nfreeze(['other'])), "$fmt: prepend an image";
    ($w, @l) = warned { $mc->get($k) };
    ok !@l && "@$w" =~ /after the serialized object/, "$fmt: a prepended image is an error too";
    # one byte after it
    ok $mc->set($k, { a => 1 }) && $mc->append($k, "\0"), "$fmt: one byte appended";
    ($w, @l) = warned { $mc->get($k) };
    ok !@l && "@$w" =~ /1 bytes after/, "$fmt: one byte after the image is an error";
}

# Cache::Memcached::Fast's own images (nfreeze), read side by side: its reads drop the
# appended bytes; ours refuse them, and read its untouched images
if ($cmf) {
    my $mc = Mcpool->new({ servers => [$srv] });
    for my $v ([1, 2], { a => [1, { b => undef }] }, bless({ n => 1 }, 'Some::Class')) {
        ok $cmf->set("${p}cmf", $v), 'Cache::Memcached::Fast stores a reference';
        is_deeply $mc->get("${p}cmf"), $v, 'its image reads';
        ok $cmf->append("${p}cmf", 'JUNK'), 'Cache::Memcached::Fast appends to it';
        is_deeply $cmf->get("${p}cmf"), $v, 'Cache::Memcached::Fast: the appended bytes silently dropped';
        my ($w, @r) = warned { $mc->get("${p}cmf") };
        ok !@r && "@$w" =~ /4 bytes after the serialized object/, 'ours: an error';
    }
}

# a thaw method of the caller's: the bytes after an image cannot be told (documented)
my $own = Mcpool->new({ servers => [$srv], serialize_methods => [\&Storable::nfreeze, sub { Storable::thaw($_[0]) }] });
ok $own->set("${p}own", [1, 2]) && $own->append("${p}own", 'JUNK'), 'own thaw: append';
is_deeply $own->get("${p}own"), [1, 2], "with the caller's own thaw method the appended bytes are not seen";

done_testing;
