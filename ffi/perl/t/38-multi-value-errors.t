# A multi-get of several unreadable values (tester finding values2 1): every key left out has
# a warning of its own, naming that key, its flags and its own reason, whichever step refused
# it (the core: a compressed value that does not inflate, an integer that is not decimal, text
# that is not UTF-8, a Python pickle; the binding: a thaw that dies, a Storable image with
# bytes after it); and get_multi, gets_multi, gat_multi and gats_multi alike. Only the first
# warning used to say why ("Mcpool::get_multi: K: MCPOOL_VALUE_FORMAT: not returned").
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use McpoolTest;
use Mcpool;
use Storable ();

my $srv = start_memcached();
my $p   = unique('mve');
my $MARK = 1 << 24;
my ($TEXT, $INT, $PICKLE, $STORABLE, $ZLIB) =
    ($MARK | 1 << 16, $MARK | 2 << 16, $MARK | 4 << 16, $MARK | 5 << 16, $MARK | 0x100000);


sub warned(&) {
    my @w;
    local $SIG{__WARN__} = sub { push @w, $_[0] };
    my $r = $_[0]->();
    return ($r, \@w);
}

# key => [flags, body, why (the reason its warning must give)]; the good ones have no why
my @items = (
    [ "${p}g1", 0,         'good1' ],
    [ "${p}bz", $ZLIB,     'notzlib', qr/cannot decompress value: .*neither a gzip, zlib nor zstd stream/ ],
    [ "${p}bi", $INT,      '12a',     qr/says int \(int\), but the body is not a decimal integer/ ],
    [ "${p}g2", $INT,      '42' ],
    [ "${p}bt", $TEXT,     "\xff",    qr/says text \(text\), but the body is not UTF-8/ ],
    [ "${p}bp", $PICKLE,   "\x80\x04K\x01.", qr/the value is a Python pickle, and Perl cannot read it/ ],
    [ "${p}bs", $STORABLE, 'not an image', qr/flagged Storable \(serialized\) and does not thaw: / ],
    [ "${p}be", $STORABLE, Storable::nfreeze([ 1, 2 ]) . 'XYZW',
        qr/a Storable image with 4 bytes after the serialized object/ ],
    [ "${p}g3", $TEXT,     "\xc3\xa9" ],
);
raw_set($srv, @$_[0 .. 2]) for @items;
my @keys = map { $_->[0] } @items;
my @bad  = grep { $_->[3] } @items;

# serialized_python: the core delivers the pickle, and the binding refuses it (Perl cannot
# read it), among the core's refusals
my $mc = Mcpool->new({ servers => [$srv], value_format => 'mcpool', serialized_python => 1 });

# each warning: this call's name, its key, its flags, its own reason, and no other key's
sub check_warnings {
    my ($what, $fn, $w, @expect) = @_;
    is(scalar @$w, scalar @expect, "$what: one warning per unreadable key")
        or diag explain $w;
    for my $i (0 .. $#expect) {
        my ($k, $flags, undef, $why) = @{ $expect[$i] };
        my $msg = $w->[$i] // '';
        like($msg, qr/^Mcpool::\Q$fn\E: /, "$what: warning $i names the call");
        like($msg, qr/\Q$k\E/, "$what: warning $i names its key, in key order");
        like($msg, qr/with flags $flags \(0x\Q${\ sprintf '%x', $flags}\E\)/,
            "$what: warning $i names the key's flags");
        like($msg, $why, "$what: warning $i gives its own key's reason");
        like($msg, qr/: not returned at /, "$what: warning $i says not returned");
        for my $other (grep { $_->[0] ne $k } @expect) {
            unlike($msg, qr/\Q$other->[0]\E/, "$what: warning $i names no other key ($other->[0])");
        }
    }
}

my %good = ("${p}g1" => 'good1', "${p}g2" => 42, "${p}g3" => "\x{e9}");
for my $fn (qw(get_multi gets_multi gat_multi gats_multi)) {
    my @args = $fn =~ /^gat/ ? (300, @keys) : @keys;
    my ($r, $w) = warned { $mc->$fn(@args) };
    is_deeply([ sort keys %$r ], [ sort keys %good ], "$fn: the readable keys, the others left out");
    is_deeply({ map { $_ => (ref $r->{$_} ? $r->{$_}[1] : $r->{$_}) } keys %$r }, \%good,
        "$fn: their values");
    check_warnings($fn, $fn, $w, @bad);
    like(Mcpool::last_error(), qr/^\Q$fn\E "\Q$bad[0][0]\E": cannot decompress value/,
        "$fn: last_error is the first failure's");
}

# The three the tester saw, alone in one get_multi
{
    my @three = grep { $_->[0] =~ /b[zit]\z/ } @items;
    my ($r, $w) = warned { $mc->get_multi(map { $_->[0] } @three) };
    is_deeply($r, {}, 'three unreadable values: none returned');
    check_warnings('three unreadable', 'get_multi', $w, @three);
}

# A thaw that makes batch calls of its own (which replace the core's per-item messages) runs
# before the later keys' warnings are given: they still give their own reasons.
{
    my ($nested, $own) = (0);
    $own = Mcpool->new({ servers => [$srv], value_format => 'mcpool',
        serialize_methods => [ \&Storable::nfreeze, sub {
            $nested++;
            $own->get_multi("${p}none1", "${p}none2");
            $own->delete_multi("${p}none3");
            die "thaw says no to <$_[0]>\n";
        } ] });
    my @order = (grep({ $_->[0] eq "${p}bs" } @items), grep({ $_->[0] =~ /b[zit]\z/ } @items));
    my @expect = map { [@$_] } @order;
    $expect[0][3] = qr/does not thaw: thaw says no to <not an image>/;
    my ($r, $w) = warned { $own->get_multi(map { $_->[0] } @order) };
    ok($nested, 'the thaw ran (and made calls of its own)');
    is_deeply($r, {}, 'nothing returned');
    check_warnings('after a thaw calling get_multi', 'get_multi', $w, @expect);
    undef $own;    # the thaw's closure held it
}

stop_memcached($srv);
done_testing;
