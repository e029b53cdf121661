# incr/decr refuse a delta that is not an unsigned 64-bit integer (-1, 2**64, 'abc', 1.5),
# where Cache::Memcached::Fast converts it into another one (incr by -1 decrements, 2**64 is
# 2**64-1, 'abc' 0, 1.5 1): nothing sent, undef, last_error naming the key and the delta, the
# counter untouched. Python, Java and the CLI refuse the same deltas. Side by side with CMF.
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use McpoolTest;
use Mcpool;

my $srv = start_memcached();
my $m = Mcpool->new({ servers => [$srv] });
my $p = unique('delta');

my $cmf = eval { require Cache::Memcached::Fast; Cache::Memcached::Fast->new({ servers => [$srv] }) };
if ($cmf) {    # what CMF does with these: another delta (the difference the POD lists)
    $cmf->set("${p}c", 10);
    no warnings 'numeric';
    is($cmf->incr("${p}c", -1), 9, 'CMF: incr by -1 gives 9 (-1 wraps to 2**64-1)');
}

for my $d (-1, '-1', 2**64, '18446744073709551616', 'abc', 1.5, '1.5', '1e3', ' 7', '', [1]) {
    my $name = ref $d ? 'a reference' : "'$d'";
    for my $op (qw(incr decr)) {
        $m->set("${p}k", 10);
        my @w;
        my $r = do { local $SIG{__WARN__} = sub { push @w, @_ }; $m->$op("${p}k", $d) };
        ok(!defined $r, "$op by $name: refused (undef)");
        like(Mcpool::last_error(), qr/^$op "\Q${p}k\E": the delta must be a decimal integer from 0 to 18446744073709551615/,
            '... last_error names the key and why');
        is($m->get("${p}k"), 10, '... the counter untouched');
        is("@w", '', '... no Perl warning');
    }
}
$m->set("${p}k", 10);
is($m->incr("${p}k", 1e3), 1010, 'a number Perl writes as an integer (1e3 is 1000): taken');
is($m->incr("${p}k", '18446744073709551615'), 1009, '2**64-1: taken (memcached wraps)');
is($m->decr("${p}k", 9), 1000, 'decr by 9');
is($m->incr("${p}k", undef), 1001, 'undef: 1, as CMF');
is($m->incr("${p}k"), 1002, 'no delta: 1');

# incr_multi / decr_multi: the item with a refused delta alone fails, unsent
$m->set("${p}a", 1);
$m->set("${p}b", 1);
my @r = $m->incr_multi([ "${p}a", -1 ], [ "${p}b", 5 ], "${p}a");
is_deeply(\@r, [ undef, 6, 2 ], 'incr_multi: the refused item undef, the others done');
like(Mcpool::last_error(), qr/^incr_multi "\Q${p}a\E": the delta must be/, '... last_error names it');
is($m->get("${p}a"), 2, '... that item was not sent (1 + the last item\'s 1)');
@r = $m->decr_multi([ "${p}b", 'x' ]);
is_deeply(\@r, [undef], 'decr_multi with only a refused item: undef');

stop_memcached($srv);
done_testing;
