# A value flagged Storable whose thaw dies (bytes prepended to a Storable image, a value
# another writer flagged 1) is an error, never a miss: get returns nothing with a warning
# naming the key and the flags, last_error says why, get_multi leaves it out (the other keys
# found), as for the other values the binding refuses (bytes appended to an image).
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use McpoolTest;
use Mcpool;

my $srv = start_memcached();
my $p = unique('thaw');

for my $format (qw(cache-memcached-fast mcpool)) {
    my $m = Mcpool->new({ servers => [$srv], value_format => $format });
    my $k = "$p$format";
    ok($m->set($k, [ 1, 2 ]), "$format: a reference stored (Storable)");
    ok($m->prepend($k, 'zz'), '... two bytes prepended');
    $m->set("${k}ok", 'fine');
    my @w;
    my $v = do { local $SIG{__WARN__} = sub { push @w, @_ }; $m->get($k) };
    ok(!defined $v, 'get: nothing');
    like(Mcpool::last_error(), qr/key "\Q$k\E" with flags \d+ \(0x[0-9a-f]+\): the value is flagged Storable \(serialized\) and does not thaw: /,
        '... last_error names the key, the flags and why') or diag Mcpool::last_error();
    is(scalar @w, 1, '... one warning');
    like($w[0] // '', qr/^Mcpool::get: MCPOOL_VALUE_FORMAT: key "\Q$k\E" with flags .*does not thaw.*: not returned/,
        '... naming the key');
    @w = ();
    my $h = do { local $SIG{__WARN__} = sub { push @w, @_ }; $m->get_multi($k, "${k}ok") };
    is_deeply($h, { "${k}ok" => 'fine' }, 'get_multi: the key left out, the other found');
    like(Mcpool::last_error(), qr/\Q$k\E.*does not thaw/, '... last_error says why');
    is(scalar @w, 1, '... one warning');
    @w = ();
    my $g = do { local $SIG{__WARN__} = sub { push @w, @_ }; $m->gets($k) };
    ok(!defined $g && @w == 1, 'gets: nothing, with a warning');
    $m->get('nothing-here');
    is(Mcpool::last_error(), '', 'a miss: last_error empty (the two are told apart)');
}

{    # a thaw of one's own that dies: the same
    my $m = Mcpool->new({ servers => [$srv],
        serialize_methods => [ \&Storable::nfreeze, sub { die "no thanks\n" } ] });
    $m->set("${p}own", { a => 1 });
    my @w;
    my $v = do { local $SIG{__WARN__} = sub { push @w, @_ }; $m->get("${p}own") };
    ok(!defined $v, 'a serialize_methods thaw that dies: nothing');
    like(Mcpool::last_error(), qr/does not thaw: no thanks/, '... last_error with its message');
    is(scalar @w, 1, '... and a warning');
}

# The thaw's message is given without the place its die added (tester finding perl2 6:
# Storable's text carried "at .../Storable.pm line 471, <GEN1> line 1, at script line 6.",
# and the warning added the caller's place again): last_error names no Perl file or line, the
# warning the caller's place once.
{
    my $m = Mcpool->new({ servers => [$srv] });
    raw_set($srv, "${p}alien", 1, 'abcd');    # flagged Storable, not an image
    my @w;
    my $v = do { local $SIG{__WARN__} = sub { push @w, @_ }; $m->get("${p}alien") };
    ok(!defined $v, "Storable's thaw dies: nothing");
    my $le = Mcpool::last_error();
    like($le, qr/does not thaw: \S/, '... last_error says why') or diag $le;
    unlike($le, qr/ line \d+/, '... without a Perl file or line') or diag $le;
    unlike($le, qr/Storable\.pm|\.t\b/, '... naming no Perl file') or diag $le;
    is(scalar @w, 1, '... one warning');
    my @places = ($w[0] // '') =~ / at \S+ line \d+/g;
    is(scalar @places, 1, '... which names a place once') or diag $w[0];
    like($w[0] // '', qr/\Q$le\E: not returned at \Q$0\E line \d+/, "... the caller's, after the message")
        or diag $w[0];

    my %thaws = (
        'a die without a newline'       => [ sub { die "no thanks" }, 'no thanks' ],
        'a die inside a string eval'    => [ sub { eval 'die "from eval"; 1' or die $@ }, 'from eval' ],
        'a croak from a module'         => [ sub { Carp::croak("bad image") }, 'bad image' ],
        'a message that says "at" itself' => [ sub { die "stopped at offset 3\n" }, 'stopped at offset 3' ],
    );
    require Carp;
    for my $what (sort keys %thaws) {
        my ($thaw, $text) = @{ $thaws{$what} };
        my $own = Mcpool->new({ servers => [$srv],
            serialize_methods => [ \&Storable::nfreeze, $thaw ] });
        $own->set("${p}own2", { a => 1 });
        my @ow;
        my $got = do { local $SIG{__WARN__} = sub { push @ow, @_ }; $own->get("${p}own2") };
        ok(!defined $got, "$what: nothing");
        like(Mcpool::last_error(), qr/does not thaw: \Q$text\E\z/, "$what: last_error is the message alone")
            or diag Mcpool::last_error();
        my @pl = ($ow[0] // '') =~ / at \S+ line \d+/g;
        is(scalar @pl, 1, "$what: the warning names one place") or diag $ow[0];
    }
}

stop_memcached($srv);
done_testing;
