# incr_or_init / decr_or_init: count, or create the counter with an initial value (and an
# expiry) when it is missing, in one call (the core's mcpool_client_incr_or_init, Python's
# incr_or_init(key, delta=1, initial=0, time=0), Java's incrOrInit). Perl had neither, so a
# caller wrote incr, then add, then incr: the creation race the core handles (tester finding
# counters 2). Arguments are read as incr's delta and set_counter's value are (strict: refused
# before anything is sent, the counter untouched), the time as every other call's.
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use McpoolTest;
use Mcpool;

my $srv = start_memcached();

# memcached's TTL of the item (seconds left; undef: never expires; 'miss' when it is gone).
my $meta = Mcpool->new({ servers => [$srv], protocol => 'meta' });
sub backend_ttl {
    my $i = $meta->meta_info(shift);
    return $i ? $i->{ttl} : 'miss';
}

for my $proto (qw(text meta binary)) {
    my $m = Mcpool->new({ servers => [$srv], protocol => $proto });
    my $p = unique("ioi-$proto");
    ok($m->can('incr_or_init') && $m->can('decr_or_init'), "$proto: both calls exist");

    # created with the initial value (which is the answer), then counted
    is($m->incr_or_init("${p}a", 5, 10, 100), 10, "$proto: incr_or_init of a missing key: initial");
    is($m->get("${p}a"), 10, "$proto: ... stored as memcached's counter");
    my $ttl = backend_ttl("${p}a");
    ok(defined $ttl && $ttl ne 'miss' && $ttl > 90 && $ttl <= 100, "$proto: ... with its expiry")
        or diag 'ttl: ' . ($ttl // 'undef (never expires)');
    is($m->incr_or_init("${p}a", 5, 10, 100), 15, "$proto: ... then counted: 15");
    is($m->incr("${p}a"), 16, "$proto: ... a counter incr takes");

    # the defaults: delta 1, initial 0, no expiry (Python's); undef is the default
    is($m->incr_or_init("${p}b"), '0E0', "$proto: defaults: created at 0 ('0E0', true, as incr's zero)");
    is(backend_ttl("${p}b"), undef, "$proto: ... never expires");
    is($m->incr_or_init("${p}b"), 1, "$proto: ... then 1");
    is($m->incr_or_init("${p}b", undef, undef, undef), 2, "$proto: undef delta, initial, time: the defaults");

    # decr_or_init: created with initial, then down, stopping at 0 as memcached does
    is($m->decr_or_init("${p}c", 3, 7), 7, "$proto: decr_or_init of a missing key: initial");
    is($m->decr_or_init("${p}c", 3, 7), 4, "$proto: ... then down: 4");
    is($m->decr_or_init("${p}c", 10, 7), '0E0', "$proto: ... stops at 0 ('0E0')");

    # memcached's counters are unsigned 64-bit: the largest initial, then incr wraps
    is($m->incr_or_init("${p}d", 1, 18446744073709551615), '18446744073709551615',
       "$proto: initial 2**64-1 (a UV)");
    is($m->incr_or_init("${p}d", 1, 0), '0E0', "$proto: ... then wraps to 0");
    is($m->incr_or_init("${p}e", 1, '18446744073709551615'), '18446744073709551615',
       "$proto: initial '18446744073709551615' (a string): exact");
    is($m->incr_or_init("${p}f", 2**63, 2**63), '9223372036854775808',
       "$proto: a float that is exactly an integer (2**63), as incr's delta");

    # refused before anything is sent: undef, last_error naming the call, the key and the
    # argument as given; nothing created
    for my $op (qw(incr_or_init decr_or_init)) {
        for my $bad (-1, 1.5, 'abc', '1e3', ' 7', '', 2**64, [1]) {
            my $name = ref $bad ? 'a reference' : "'$bad'";
            my $k = "${p}bad";
            my @w;
            local $SIG{__WARN__} = sub { push @w, @_ };
            ok(!defined $m->$op($k, $bad, 1), "$proto: $op with delta $name: undef");
            like(Mcpool::last_error(), qr/^$op "\Q$k\E": the delta must be a decimal integer from 0 to 18446744073709551615/,
                 '... last_error names the call, the key and why');
            ok(!defined $m->$op($k, 1, $bad), "$proto: $op with initial $name: undef");
            like(Mcpool::last_error(), qr/^$op "\Q$k\E": the initial value must be a decimal integer from 0 to 18446744073709551615 .*, not '/,
                 '... last_error names the call, the key and why');
            ok(!defined $m->get($k), '... nothing created');
            is("@w", '', '... no Perl warning');
        }
        my $k = "${p}badt";
        ok(!defined $m->$op($k, 1, 1, 2**31), "$proto: $op with a time above 2**31-1: undef");
        like(Mcpool::last_error(), qr/^$op "\Q$k\E": invalid ttl: 2147483648 is above 2147483647/,
             '... last_error names the time as given');
        ok(!defined $m->$op($k, 1, 1, '5m'), "$proto: $op with the time '5m': undef");
        like(Mcpool::last_error(), qr/^$op "\Q$k\E": invalid expiration time: "5m" is not a number of seconds/,
             '... last_error names it');
        ok(!defined $m->get($k), '... nothing created');
        ok(!eval { $m->$op(undef); 1 }, "$proto: $op of an undef key croaks");
        like($@, qr/Mcpool::$op: the key is undef/, '... naming the call');
    }

    # a value that is not a number: the server's error (undef), the value untouched
    $m->set("${p}txt", 'abc');
    ok(!defined $m->incr_or_init("${p}txt", 1, 5), "$proto: incr_or_init of a non-numeric value: undef");
    like(Mcpool::last_error(), qr/incr_or_init/, '... last_error names the call');
    is($m->get("${p}txt"), 'abc', '... the value untouched');
}

# the hooked (on_operation), read-only and server-less clients have them too
{
    my @ops;
    my $m = Mcpool->new({ servers => [$srv], on_operation => sub { push @ops, $_[0]{op} } });
    my $k = unique('ioi-hooked');
    is($m->incr_or_init($k, 1, 3), 3, 'on_operation: incr_or_init works');
    ok(scalar(@ops), '... and the operation is reported') or diag "ops: @ops";

    my $ro = Mcpool->new({ servers => [$srv], readonly => 1 });
    ok(!defined $ro->incr_or_init($k, 1, 3), 'readonly: incr_or_init refused (undef)');
    like(Mcpool::last_error(), qr/^incr_or_init "\Q$k\E": this client is read-only/, '... saying why');
    ok(!defined $ro->decr_or_init($k, 1, 3), 'readonly: decr_or_init refused (undef)');
    is($m->get($k), 3, '... the counter untouched');

    my $none = Mcpool->new({ servers => [] });
    ok(!defined $none->incr_or_init($k), 'no servers: undef');
    like(Mcpool::last_error(), qr/^incr_or_init: no servers/, '... saying why');
}

stop_memcached($srv);
done_testing;
