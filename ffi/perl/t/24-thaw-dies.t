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

stop_memcached($srv);
done_testing;
