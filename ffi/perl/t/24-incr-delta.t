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

# A scalar that holds a number is read by that number, whatever its string says (a dualvar,
# as CMF reads it); only one that holds none (a plain string) by its text, which must be
# decimal digits, read exactly (tester finding badinput 1: dualvar(3, '7') was read as 7).
{
    use Scalar::Util qw(dualvar);
    for my $case ([ "dualvar(3, '7')", sub { dualvar(3, '7') } ], [ "dualvar(3, 'x')", sub { dualvar(3, 'x') } ],
                  [ "dualvar(3.0, '7')", sub { dualvar(3.0, '7') } ]) {
        my ($name, $make) = @$case;
        $m->set("${p}d", 10);
        is($m->incr("${p}d", $make->()), 13, "incr 10 by $name: 13, by its number");
        $m->set("${p}d", 10);
        is($m->decr("${p}d", $make->()), 7, "decr 10 by $name: 7");
        $m->set("${p}d", 10);
        is_deeply([ $m->incr_multi([ "${p}d", $make->() ]) ], [13], "incr_multi 10 by $name: 13");
        $m->set("${p}d", 10);
        is_deeply([ $m->decr_multi([ "${p}d", $make->() ]) ], [7], "decr_multi 10 by $name: 7");
        ok($m->set_counter("${p}sc", $make->()), "set_counter($name): stored");
        is($m->get("${p}sc"), 3, '... as 3');
        $m->set("${p}d", 10);
        is($m->incr_or_init("${p}d", $make->(), 0), 13, "incr_or_init 10 by $name: 13");
    }
    if ($cmf) {
        $cmf->set("${p}d", 10);
        is($cmf->incr("${p}d", dualvar(3, '7')), 13, "CMF: incr 10 by dualvar(3, '7') is 13 too");
    }
    for my $d (dualvar(-1, '5'), dualvar(2.5, '5')) {
        $m->set("${p}d", 10);
        ok(!defined $m->incr("${p}d", $d), 'a dualvar whose number is refused (-1, 2.5): refused, not read as its string');
        is($m->get("${p}d"), 10, '... the counter untouched');
    }

    # a tied dualvar: fetched once, read by its number
    {
        package DeltaFetchCount;
        sub TIESCALAR { my ($c, $v) = @_; return bless { v => $v, n => 0 }, $c }
        sub FETCH     { my $s = shift; $s->{n}++; return $s->{v} }
        sub STORE     { }
    }
    my $obj = tie my $t, 'DeltaFetchCount', dualvar(3, '7');
    $m->set("${p}d", 10);
    is($m->incr("${p}d", $t), 13, 'incr by a tied dualvar(3, "7"): 13');
    is($obj->{n}, 1, '... fetched once');
    $obj = tie my $bad, 'DeltaFetchCount', 'x';
    ok(!defined $m->incr("${p}d", $bad), 'incr by a tied "x": refused');
    like(Mcpool::last_error(), qr/not 'x'/, '... last_error shows it');
    is($obj->{n}, 1, '... fetched once, message included');

    # a refused dualvar is named by the number it is read by (tester finding retest39 5)
    $m->set("${p}d", 10);
    ok(!defined $m->incr("${p}d", dualvar(2.5, '7')), 'incr by dualvar(2.5, "7"): refused');
    like(Mcpool::last_error(), qr/not '2\.5'/, '... named as 2.5, not as "7"');
    # leading zeros are no digits: 2**64-1 padded past 20 characters is still 2**64-1
    is($m->incr("${p}d", '00018446744073709551615'), 9, 'incr 10 by "000" . (2**64-1): wraps to 9');
    ok(!defined $m->incr("${p}d", '00018446744073709551616'), '... 2**64 padded: refused');
    # the digits of 2**64-1, a plain string: exact, also once used as a number
    my $big = '18446744073709551615';
    $m->set("${p}d", 10);
    is($m->incr("${p}d", $big), 9, 'incr 10 by "18446744073709551615": wraps to 9 (exact)');
    ok($m->set_counter("${p}sc", $big), 'set_counter("18446744073709551615")');
    is($m->get("${p}sc"), '18446744073709551615', '... stored exactly');
    for my $use ([ 'as a float (* 1.5)', sub { my $x = $_[0] * 1.5 } ], [ 'as a float (sqrt)', sub { my $x = sqrt $_[0] } ],
                 [ 'as an integer (+ 0)', sub { my $x = $_[0] + 0 } ], [ 'in ==', sub { my $x = $_[0] == 1 } ]) {
        my ($how, $do) = @$use;
        my $s = '18446744073709551615';
        $do->($s);
        $m->set("${p}d", 10);
        is($m->incr("${p}d", $s), 9, "\"18446744073709551615\" used $how: still exact (wraps to 9)");
        ok($m->set_counter("${p}sc", $s), '... set_counter');
        is($m->get("${p}sc"), '18446744073709551615', '... stores all 20 digits');
        my $s2 = '9007199254740993';    # 2**53+1: a double rounds it to 2**53
        $do->($s2);
        $m->set("${p}d", 0);
        is($m->incr("${p}d", $s2), '9007199254740993', "\"9007199254740993\" used $how: exact");
    }
    my $seven = '7';
    { my $x = $seven + 0 }
    $m->set("${p}d", 10);
    is($m->incr("${p}d", $seven), 17, '"7" used as a number: 7');
    { no warnings 'numeric'; my $x = '7abc'; my $y = $x + 0;
      $m->set("${p}d", 10);
      ok(!defined $m->incr("${p}d", $x), '"7abc" used as a number: still refused (Perl keeps its 7 private)'); }
}

stop_memcached($srv);
done_testing;
