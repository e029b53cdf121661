# A 64-bit integer argument (incr/decr's delta, incr_multi/decr_multi's, the _with_version
# calls' delta and version, set_counter's value) is read by its value: an exact integer that
# Perl holds as a float (2**62, 2**63, 1e19) is that integer, as Cache::Memcached::Fast reads
# it; it was read from Perl's printed form (9.22337203685478e+18) and refused. A float that is
# not an integer from 0 to 2**64-1 stays refused, never wrapped, clamped or truncated: 2.5,
# -1, NaN, Inf and 2**64, which is also what Perl computes for 2**64-1 (double precision; the
# integer literal 18446744073709551615 is a UV, taken). Tester finding arith 2.
use strict;
use warnings;
use Config;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use McpoolTest;
use Mcpool;

my $srv = start_memcached();
my $m = Mcpool->new({ servers => [$srv] });
my $p = unique('u64');
my $k = "${p}k";
my $double = $Config{nvsize} == 8;    # 2**64-1 is 2**64 as a double; a long double holds it

# ----- incr / decr: an exact integer held as a float is that integer -----
my %taken = (
    '2**62'                  => [ 2**62, '4611686018427387914' ],
    '2**63'                  => [ 2**63, '9223372036854775818' ],
    '1e19'                   => [ 1e19,  '10000000000000000010' ],
    '2**53+2'                => [ 2**53 + 2, '9007199254741004' ],
    '4.0'                    => [ 4.0, '14' ],
    '18446744073709551615 (a UV)' => [ 18446744073709551615, '9' ],    # memcached wraps
);
for my $name (sort keys %taken) {
    my ($d, $want) = @{ $taken{$name} };
    $m->set($k, 10);
    is($m->incr($k, $d), $want, "incr 10 by $name: $want");
    is(Mcpool::last_error(), '', '... no error');
}
$m->set($k, '9223372036854775818');
is($m->decr($k, 2**63), 10, 'decr by 2**63 (a float): 10');
$m->set($k, 10);
is($m->incr($k, -0.0), 10, 'incr by -0.0 (the integer 0): 10');

# a float whose printed form was asked for (before perl 5.36 that marks it a string too)
{
    my $d = 2**63;
    my $printed = "$d";
    is($printed, '9.22337203685478e+18', 'Perl prints 2**63 as 9.22337203685478e+18');
    $m->set($k, 10);
    is($m->incr($k, $d), '9223372036854775818', '... and incr by it once printed is still 2**63');
}

# a float through get magic (a tied scalar) is read by its value too
{
    package FetchOnce;
    sub TIESCALAR { my ($c, $v) = @_; return bless { v => $v, n => 0 }, $c }
    sub FETCH     { my $s = shift; $s->{n}++; return $s->{v} }
    sub STORE     { }
}
{
    my $obj = tie my $t, 'FetchOnce', 2**63;
    $m->set($k, 10);
    is($m->incr($k, $t), '9223372036854775818', 'incr by a tied scalar holding 2**63');
    is($obj->{n}, 1, '... fetched once');
    "18446744073709551615" =~ /(\d+)/;
    $m->set($k, 10);
    is($m->incr($k, $1), 9, 'incr by $1 holding the digits of 2**64-1 (read exactly): wraps to 9');
}

# refused, nothing sent, the same message as before
my @refused = (
    [ '2.5', 2.5 ],
    [ '-1', -1 ],
    [ '-1.0', -1.0 ],
    [ '-2**63', -2**63 ],
    [ '2**64 (a float)', 2**64 ],
    [ '2**64-1 computed (a float equal to 2**64)', 2**64 - 1 ],
    [ '1.8446744073709552e19', 1.8446744073709552e19 ],
    [ '9**99', 9**99 ],
    [ 'Inf', 9**9**9 ],
    [ '-Inf', -9**9**9 ],
    [ 'NaN', do { my $i = 9**9**9; $i - $i } ],
);
for my $case (@refused) {
    my ($name, $d) = @$case;
    next if !$double && $name =~ /^2\*\*64-1/;    # a long double holds 2**64-1 exactly
    for my $op (qw(incr decr)) {
        $m->set($k, 10);
        my @w;
        my $r = do { local $SIG{__WARN__} = sub { push @w, @_ }; $m->$op($k, $d) };
        ok(!defined $r, "$op by $name: refused (undef)");
        like(Mcpool::last_error(),
            qr/^$op "\Q$k\E": the delta must be a decimal integer from 0 to 18446744073709551615 \(memcached's counters are unsigned 64-bit; for a negative one use (?:incr|decr)\), not '/,
            '... last_error as for any refused delta');
        is($m->get($k), 10, '... the counter untouched');
        is("@w", '', '... no Perl warning');
    }
}

# ----- incr_multi / decr_multi: the same reading per item -----
$m->set("${p}a", 10);
$m->set("${p}b", 10);
my @r = $m->incr_multi([ "${p}a", 2**63 ], [ "${p}b", 2**64 ], [ "${p}b", 2.5 ], [ "${p}b", 2**62 ]);
is_deeply(\@r, [ '9223372036854775818', undef, undef, '4611686018427387914' ],
    'incr_multi: 2**63 and 2**62 (floats) taken, 2**64 and 2.5 refused alone');
like(Mcpool::last_error(), qr/^incr_multi "\Q${p}b\E": the delta must be a decimal integer/,
    '... last_error names the first refused one');
@r = $m->decr_multi([ "${p}a", 2**63 ]);
is_deeply(\@r, [10], 'decr_multi by 2**63 (a float)');

# ----- set_counter: its value read the same way -----
ok($m->set_counter($k, 2**63), 'set_counter(2**63 as a float) stores');
is($m->get($k), '9223372036854775808', '... as 9223372036854775808');
is($m->incr($k, 2**62), '13835058055282163712', '... and incr by 2**62 counts on it');
ok($m->set_counter($k, 1e19), 'set_counter(1e19)');
is($m->get($k), '10000000000000000000', '... as 10000000000000000000');
ok($m->set_counter($k, 18446744073709551615), 'set_counter(18446744073709551615, a UV) stores');
is($m->incr($k), '0E0', '... and incr wraps to 0');
for my $case (@refused) {
    my ($name, $d) = @$case;
    next if !$double && $name =~ /^2\*\*64-1/;
    ok(!eval { $m->set_counter($k, $d); 1 }, "set_counter($name) croaks");
    like($@, qr/^set_counter "\Q$k\E": the value must be a decimal integer from 0 to 18446744073709551615 \(memcached's counters are unsigned 64-bit\), not '/,
        '... with the same message as before, naming the key (tester finding retest40 1)');
}
is($m->incr($k, 0), '0E0', 'none of them was stored (the counter is still 0)');

# ----- the _with_version calls: delta and version read the same way -----
# (the installed memcached is older than 1.6.27: the call is refused by the server's
# version, after both arguments were read)
{
    my $mm = Mcpool->new({ servers => [$srv], protocol => 'meta' });
    my @x = $mm->incr_with_version($k, 2**63, 2**63);
    is_deeply(\@x, [], 'incr_with_version(2**63, 2**63): nothing (the server is too old)');
    unlike(Mcpool::last_error(), qr/the delta must be/, '... the delta was taken');
    ok(!defined $mm->incr_with_version($k, 2**64, 5), 'incr_with_version(2**64): refused');
    like(Mcpool::last_error(), qr/^incr_with_version "\Q$k\E": the delta must be a decimal integer/,
        '... the delta named');
    ok(eval { $mm->delete_with_version($k, '18446744073709551615'); 1 },
        'delete_with_version with the 20 digits of 2**64-1 (read exactly, not as a float)')
        or diag $@;
    ok(eval { $mm->delete_with_version($k, 2**63); 1 }, 'delete_with_version(2**63 as a float)');
    for my $case (@refused) {
        my ($name, $v) = @$case;
        next if !$double && $name =~ /^2\*\*64-1/;
        ok(!eval { $mm->delete_with_version($k, $v); 1 }, "delete_with_version($name) croaks");
        like($@, qr/^delete_with_version "\Q$k\E": the version must be an integer from 0 to 2\*\*64-1, not /,
            '... with the same message as before, naming the key and the version (tester finding retest40 1)');
        ok(!eval { $mm->set_with_version($k, 'v', $v); 1 }, "set_with_version($name) croaks");
        like($@, qr/^set_with_version "\Q$k\E": the version must be an integer from 0 to 2\*\*64-1, not /,
            '... as delete_with_version');
    }
}

# ----- side by side with Cache::Memcached::Fast -----
if (my $cmf = eval { require Cache::Memcached::Fast; Cache::Memcached::Fast->new({ servers => [$srv] }) }) {
    for my $d (2**62, 2**63) {
        $cmf->set($k, 10);
        my $theirs = $cmf->incr($k, $d);
        $m->set($k, 10);
        is($m->incr($k, $d), $theirs, "incr by $d: as Cache::Memcached::Fast ($theirs)");
    }
    # the difference the POD lists: CMF reads 2**64 (and 2**64-1 computed as a float) as
    # 2**64-1, an incr that decrements by one
    $cmf->set($k, 10);
    is($cmf->incr($k, 2**64), 9, 'CMF: incr 10 by 2**64 (a float) gives 9 (clamped to 2**64-1)');
    $m->set($k, 10);
    ok(!defined $m->incr($k, 2**64), '... refused here');
}

stop_memcached($srv);
done_testing;
